"""What the metastore's server and schema set-up both read: where it lives, who connects, with
which JDBC driver."""

from __future__ import annotations

import ipaddress
import os
from dataclasses import dataclass, field
from pathlib import Path

from dbt.adapters.sparkdelta.session import SessionSettings
from lakehouse import processes
from lakehouse.settings import session_settings

DEFAULT_PORT = 5433
DEFAULT_BIND_HOST = "127.0.0.1"
DEFAULT_DRIVER = "/usr/share/java/postgresql.jar"
DATABASE = "metastore"
DEFAULT_USER = "lakehouse"
INSTALL_HINT = "apt-get install -y postgresql libpostgresql-jdbc-java"


class MetastoreError(processes.ProcessError):
    """The metastore could not be started, reached, initialised or stopped."""


@dataclass(frozen=True)
class MetastoreSettings:
    session: SessionSettings
    port: int = DEFAULT_PORT
    # The address the local server listens on: loopback unless other hosts must reach it.
    bind_host: str = DEFAULT_BIND_HOST
    user: str = DEFAULT_USER
    # Only ever from the environment; a local server without one gets a generated password,
    # kept in `password_file` (mode 0600).
    password: str | None = field(default=None, repr=False)
    driver: Path = Path(DEFAULT_DRIVER)
    # LAKEHOUSE_METASTORE_URL: which database `init` initialises (default: the local server).
    url: str | None = None

    @classmethod
    def from_env(cls, project_dir: str | os.PathLike | None = None) -> MetastoreSettings:
        port = os.environ.get("LAKEHOUSE_METASTORE_PORT") or str(cls.port)
        if not port.isdigit():
            raise MetastoreError(f"LAKEHOUSE_METASTORE_PORT={port!r}: expected a port number.")
        return cls(
            session=session_settings(Path(project_dir)) if project_dir else session_settings(),
            port=int(port),
            bind_host=os.environ.get("LAKEHOUSE_METASTORE_BIND_HOST") or cls.bind_host,
            user=os.environ.get("LAKEHOUSE_METASTORE_USER") or cls.user,
            password=os.environ.get("LAKEHOUSE_METASTORE_PASSWORD") or None,
            driver=Path(os.environ.get("LAKEHOUSE_METASTORE_DRIVER") or DEFAULT_DRIVER),
            url=os.environ.get("LAKEHOUSE_METASTORE_URL") or None,
        )

    @property
    def directory(self) -> Path:
        return self.session.home / "metastore-pg"

    @property
    def data_dir(self) -> Path:
        return self.directory / "data"

    @property
    def log_file(self) -> Path:
        return self.directory / "postgres.log"

    @property
    def pid_file(self) -> Path:
        """Written by PostgreSQL itself (first line: the postmaster's pid)."""
        return self.data_dir / "postmaster.pid"

    @property
    def password_file(self) -> Path:
        return self.directory / "password"

    @property
    def init_log(self) -> Path:
        return self.directory / "schema-init.log"

    @property
    def local_url(self) -> str:
        """The local server's URL, at the address it listens on."""
        return f"jdbc:postgresql://{self.bind_host}:{self.port}/{DATABASE}"

    @property
    def serves_other_hosts(self) -> bool:
        try:
            return not ipaddress.ip_address(self.bind_host).is_loopback
        except ValueError:  # a name
            return self.bind_host != "localhost"

    def local_password(self) -> str:
        """The local server's password: the environment's, else the generated one."""
        if self.password:
            return self.password
        if self.password_file.exists():
            return self.password_file.read_text().strip()
        raise MetastoreError(
            f"No password for the local metastore: set LAKEHOUSE_METASTORE_PASSWORD or run "
            f"`lakehouse metastore start` (it generates one in {self.password_file})."
        )


def check_driver(driver: Path) -> None:
    if not driver.is_file():
        raise MetastoreError(
            f"The PostgreSQL JDBC driver {driver} does not exist: {INSTALL_HINT} (Debian's "
            "libpostgresql-jdbc-java installs /usr/share/java/postgresql.jar), or point "
            "LAKEHOUSE_METASTORE_DRIVER at the driver's jar."
        )
