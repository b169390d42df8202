"""A real LDAP directory for the endpoint's Thrift authentication tests: Debian's slapd with one
user, `analyst`, and a random password (apt-get install slapd ldap-utils)."""

from __future__ import annotations

import secrets
import shutil
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

SLAPD, LDAPADD = Path("/usr/sbin/slapd"), shutil.which("ldapadd")
SUFFIX = "dc=lakehouse,dc=test"
PEOPLE = f"ou=people,{SUFFIX}"

SLAPD_CONF = """\
include /etc/ldap/schema/core.schema
include /etc/ldap/schema/cosine.schema
include /etc/ldap/schema/inetorgperson.schema
modulepath /usr/lib/ldap
moduleload back_mdb
pidfile {home}/slapd.pid
database mdb
suffix "{suffix}"
rootdn "cn=admin,{suffix}"
rootpw {admin_password}
directory {home}/data
"""

ENTRIES = """\
dn: {suffix}
objectClass: dcObject
objectClass: organization
o: lakehouse
dc: lakehouse

dn: {people}
objectClass: organizationalUnit
ou: people

dn: uid={user},{people}
objectClass: inetOrgPerson
uid: {user}
cn: {user}
sn: {user}
userPassword: {password}
"""


@dataclass
class Directory:
    url: str
    user: str
    password: str
    home: Path

    def stop(self) -> None:
        pid_file = self.home / "slapd.pid"
        if pid_file.exists():
            subprocess.run(["kill", pid_file.read_text().strip()], check=False)


def missing() -> str | None:
    """Why no directory can be started here, or None."""
    if SLAPD.exists() and LDAPADD:
        return None
    return "needs an LDAP server: apt-get install slapd ldap-utils"


def start_directory(
    home: Path, url: str, on_host: Callable[[list], list] = lambda command: command
) -> Directory:
    """slapd listening at `url` (ldap://address:port), its data in `home`; `on_host` wraps a
    command to run it on a test host (python_tests/hosts.py)."""
    (home / "data").mkdir(parents=True)
    admin_password, password = secrets.token_urlsafe(12), secrets.token_urlsafe(12)
    (home / "slapd.conf").write_text(
        SLAPD_CONF.format(home=home, suffix=SUFFIX, admin_password=admin_password)
    )
    subprocess.run(on_host([SLAPD, "-f", home / "slapd.conf", "-h", f"{url}/"]), check=True)
    directory = Directory(url, "analyst", password, home)
    entries = ENTRIES.format(suffix=SUFFIX, people=PEOPLE, user="analyst", password=password)
    add = [LDAPADD, "-x", "-H", url, "-D", f"cn=admin,{SUFFIX}", "-w", admin_password]
    for _ in range(20):  # slapd forks and listens shortly after
        added = subprocess.run(on_host(add), input=entries, capture_output=True, text=True)
        if added.returncode == 0:
            return directory
        time.sleep(0.5)
    directory.stop()
    raise AssertionError(f"slapd at {url} did not take the test user: {added.stderr}")
