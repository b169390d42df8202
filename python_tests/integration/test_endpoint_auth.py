"""The endpoint refuses clients that do not authenticate when told to: Thrift with LDAP, checked
against a real LDAP server (Debian's slapd, started here on loopback with one user).

An endpoint that listens beyond loopback must authenticate its clients (docs/deployment.md).
"""

from __future__ import annotations

import secrets
import shutil
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from lakehouse.dbt_runner import DbtRunner, environment
from python_tests.conftest import PROJECT_DIR, endpoint_env, free_port, running_test_endpoint

pytestmark = pytest.mark.auth
SLAPD, LDAPADD = Path("/usr/sbin/slapd"), shutil.which("ldapadd")
SUFFIX = "dc=lakehouse,dc=test"
PEOPLE = f"ou=people,{SUFFIX}"


@dataclass
class Directory:
    url: str
    user: str
    password: str


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


@pytest.fixture(scope="module")
def ldap(tmp_path_factory):
    """slapd on a free loopback port with one user, `analyst`, and a random password."""
    if not (SLAPD.exists() and LDAPADD):
        pytest.skip("needs an LDAP server: apt-get install slapd ldap-utils")
    home = tmp_path_factory.mktemp("ldap")
    (home / "data").mkdir()
    admin_password, password = secrets.token_urlsafe(12), secrets.token_urlsafe(12)
    (home / "slapd.conf").write_text(
        SLAPD_CONF.format(home=home, suffix=SUFFIX, admin_password=admin_password)
    )
    url = f"ldap://127.0.0.1:{free_port()}"
    subprocess.run([SLAPD, "-f", home / "slapd.conf", "-h", f"{url}/"], check=True)
    entries = ENTRIES.format(suffix=SUFFIX, people=PEOPLE, user="analyst", password=password)
    for _ in range(20):  # slapd forks and listens shortly after
        added = subprocess.run(
            [LDAPADD, "-x", "-H", url, "-D", f"cn=admin,{SUFFIX}", "-w", admin_password],
            input=entries, capture_output=True, text=True,
        )  # fmt: skip
        if added.returncode == 0:
            break
        time.sleep(0.5)
    assert added.returncode == 0, added.stderr
    yield Directory(url, "analyst", password)
    subprocess.run(["kill", (home / "slapd.pid").read_text().strip()], check=False)


@pytest.fixture(scope="module")
def ldap_endpoint(ldap, tmp_path_factory):
    env = endpoint_env(
        tmp_path_factory,
        memory="1g",
        LAKEHOUSE_THRIFT_AUTH="LDAP",
        LAKEHOUSE_LDAP_URL=ldap.url,
        LAKEHOUSE_LDAP_BASE_DN=PEOPLE,
        LAKEHOUSE_THRIFT_USER=ldap.user,
        LAKEHOUSE_THRIFT_PASSWORD=ldap.password,
    )
    with running_test_endpoint(env, timeout=300) as settings:
        yield settings, env


def thrift_query(settings, user: str, password: str | None, auth: str = "LDAP") -> list:
    from pyhive import hive

    connection = hive.connect(
        host="localhost", port=settings.thrift_port, username=user, password=password, auth=auth
    )
    try:
        cursor = connection.cursor()
        cursor.execute("select 1")
        return cursor.fetchall()
    finally:
        connection.close()


def test_thrift_refuses_clients_that_do_not_authenticate(ldap_endpoint, ldap):
    settings, _ = ldap_endpoint
    refused = []
    for user, password, auth in (
        (ldap.user, None, "NONE"),  # no credentials at all
        (ldap.user, "wrong-password", "LDAP"),
        ("mallory", ldap.password, "LDAP"),  # a user the directory does not know
    ):
        with pytest.raises(Exception) as refusal:
            thrift_query(settings, user, password, auth)
        refused.append(f"{user}/{auth}: {type(refusal.value).__name__}")
    print(f"  refused: {refused}")
    assert thrift_query(settings, ldap.user, ldap.password) == [(1,)]


def test_dbt_signs_in_with_the_users_password(ldap_endpoint, tmp_path):
    settings, env = ldap_endpoint
    dbt = DbtRunner(PROJECT_DIR, PROJECT_DIR, work_dir=tmp_path)
    with environment({**env, "LAKEHOUSE_TARGET": "thrift"}):
        shown = dbt.invoke("show", "--inline", "select 41 + 1 as answer", "--output", "json")
        assert shown.result.results[0].agate_table.rows[0]["answer"] == 42
        with environment({"LAKEHOUSE_THRIFT_PASSWORD": "wrong-password"}):
            refused = dbt.invoke("show", "--inline", "select 1", expect_success=False)
    assert not refused.success
