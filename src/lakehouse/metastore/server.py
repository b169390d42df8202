"""The local PostgreSQL server of `lakehouse metastore start|stop|status`: Debian's server
programs run as `postgres` under `$LAKEHOUSE_HOME/metastore-pg/`, the database and its owner,
the exports that point the profile at it."""

from __future__ import annotations

import glob
import os
import pwd
import re
import secrets
import subprocess
from pathlib import Path

from lakehouse import processes
from lakehouse.metastore.hive import describe_tables, init_schema
from lakehouse.metastore.settings import (
    DATABASE,
    INSTALL_HINT,
    MetastoreError,
    MetastoreSettings,
    check_driver,
)

# The account PostgreSQL runs as when the CLI runs as root (the server refuses root).
SERVER_ACCOUNT = "postgres"


def server_binaries() -> Path:
    """The newest /usr/lib/postgresql/<version>/bin with initdb and pg_ctl."""
    candidates = [
        Path(path)
        for path in glob.glob("/usr/lib/postgresql/*/bin")
        if (Path(path) / "initdb").exists() and (Path(path) / "pg_ctl").exists()
    ]
    if not candidates:
        raise MetastoreError(
            "PostgreSQL's server programs (initdb, pg_ctl under /usr/lib/postgresql/<version>/"
            f"bin) are not installed: {INSTALL_HINT}"
        )
    return max(candidates, key=lambda path: _version_key(path.parent.name))


def _version_key(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in re.findall(r"\d+", version))


def _server_user_command(command: list[str]) -> list[str]:
    """PostgreSQL refuses to run as root: as root, run its programs as `postgres`."""
    if os.geteuid() != 0:
        return command
    return ["runuser", "-u", SERVER_ACCOUNT, "--", *command]


def _run(command: list[str], what: str, stdin: str | None = None, timeout: float = 120.0) -> str:
    result = subprocess.run(
        _server_user_command(command),
        input=stdin,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    if result.returncode != 0:
        output = (result.stderr or result.stdout).strip()
        raise MetastoreError(f"{what} failed: {output}")
    return result.stdout


def _prepare_directory(settings: MetastoreSettings) -> None:
    settings.directory.mkdir(parents=True, exist_ok=True)
    settings.directory.chmod(0o700)
    if os.geteuid() != 0:
        return
    try:
        account = pwd.getpwnam(SERVER_ACCOUNT)
    except KeyError:
        raise MetastoreError(
            f"No `{SERVER_ACCOUNT}` account to run PostgreSQL as (it refuses root): "
            f"{INSTALL_HINT} creates it."
        ) from None
    os.chown(settings.directory, account.pw_uid, account.pw_gid)
    reachable = subprocess.run(
        _server_user_command(["test", "-w", str(settings.directory)]), capture_output=True
    )
    if reachable.returncode != 0:
        raise MetastoreError(
            f"PostgreSQL runs as `{SERVER_ACCOUNT}`, which cannot reach {settings.directory}: "
            "let it traverse the parent directories (chmod o+x) or put LAKEHOUSE_HOME where "
            "it can."
        )


def _psql(settings: MetastoreSettings, sql: str, database: str = "postgres") -> str:
    """Run SQL as the server's superuser over its private Unix socket (SQL on stdin, so no
    password ever appears on a command line)."""
    psql = server_binaries() / "psql"
    command = [str(psql), "-X", "-q", "-t", "-A", "-v", "ON_ERROR_STOP=1"]
    command += ["-h", str(settings.directory), "-p", str(settings.port)]
    command += ["-U", "postgres", "-d", database]
    return _run(command, "psql", stdin=sql)


def _literal(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


def _identifier(value: str) -> str:
    return '"' + value.replace('"', '""') + '"'


def server_pid(settings: MetastoreSettings) -> int | None:
    """The postmaster's pid when it runs (PostgreSQL writes it; a stale file can outlive it)."""
    try:
        pid = int(settings.pid_file.read_text().splitlines()[0])
    except (FileNotFoundError, IndexError, ValueError):
        return None
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return None
    except PermissionError:
        pass  # alive, owned by the server's account
    return pid


def _ensure_password(settings: MetastoreSettings) -> str:
    if settings.password:
        return settings.password
    if not settings.password_file.exists():
        settings.password_file.write_text(secrets.token_hex(16) + "\n")
        settings.password_file.chmod(0o600)
    return settings.password_file.read_text().strip()


def start(settings: MetastoreSettings, timeout: float = 120.0) -> str:
    binaries = server_binaries()
    check_driver(settings.driver)
    pid = server_pid(settings)
    if pid is None:
        processes.check_ports_free({settings.port: "LAKEHOUSE_METASTORE_PORT"})
        _prepare_directory(settings)
        if not (settings.data_dir / "PG_VERSION").exists():
            _run(
                [
                    str(binaries / "initdb"),
                    "-D",
                    str(settings.data_dir),
                    "-U",
                    "postgres",
                    "-E",
                    "UTF8",
                    "--no-locale",
                    # The superuser only over the private socket; everyone else by password.
                    "--auth-local=trust",
                    "--auth-host=scram-sha-256",
                ],
                "initdb",
            )
        if settings.serves_other_hosts:
            _allow_other_hosts(settings)
        options = (
            f"-p {settings.port} -k {settings.directory} "
            f"-c listen_addresses={settings.bind_host} "
            # Each Spark process holds a pool of metastore connections (10 by default).
            "-c max_connections=200"
        )
        _run(
            [
                str(binaries / "pg_ctl"),
                "-D",
                str(settings.data_dir),
                "-l",
                str(settings.log_file),
                "-o",
                options,
                "-w",
                "-t",
                str(int(timeout)),
                "start",
            ],
            f"Starting PostgreSQL (log {settings.log_file})",
            timeout=timeout + 10,
        )
        pid = server_pid(settings)
        state = "started"
    else:
        state = "already running"
    password = _ensure_password(settings)
    _ensure_database(settings, password)
    initialised = init_schema(settings, settings.local_url, password)
    return (
        f"# {state} (pid {pid}): {settings.local_url}, {initialised}; log {settings.log_file}\n"
        + exports(settings)
    )


def _allow_other_hosts(settings: MetastoreSettings) -> None:
    """initdb lets password logins in from loopback only: let the metastore's user in from any
    address, by password (scram-sha-256), into the metastore database alone."""
    rule = f"host {DATABASE} {settings.user} all scram-sha-256"
    hba = settings.data_dir / "pg_hba.conf"
    if rule not in hba.read_text().splitlines():
        with hba.open("a") as file:
            file.write(f"# lakehouse metastore start, LAKEHOUSE_METASTORE_BIND_HOST\n{rule}\n")


def _ensure_database(settings: MetastoreSettings, password: str) -> None:
    role, database = _identifier(settings.user), _identifier(DATABASE)
    exists = _psql(settings, f"select 1 from pg_roles where rolname = {_literal(settings.user)}")
    verb = "alter" if exists.strip() else "create"
    # The password may change between starts (it comes from the environment).
    _psql(settings, f"{verb} role {role} login password {_literal(password)}")
    if not _psql(settings, f"select 1 from pg_database where datname = {_literal(DATABASE)}"):
        _psql(settings, f"create database {database} owner {role} encoding 'UTF8'")


def exports(settings: MetastoreSettings) -> str:
    """Shell lines that point the profile at the local server (the password by reference)."""
    if settings.password:
        password = "$LAKEHOUSE_METASTORE_PASSWORD  # already set"
    else:
        password = f'"$(cat {settings.password_file})"'
    return "\n".join(
        [
            f"export LAKEHOUSE_METASTORE_URL={settings.local_url}",
            f"export LAKEHOUSE_METASTORE_USER={settings.user}",
            f"export LAKEHOUSE_METASTORE_PASSWORD={password}",
            f"export LAKEHOUSE_METASTORE_DRIVER={settings.driver}",
        ]
    )


def stop(settings: MetastoreSettings, timeout: float = 60.0) -> str:
    pid = server_pid(settings)
    if pid is None:
        return "not running"
    _run(
        [
            str(server_binaries() / "pg_ctl"),
            "-D",
            str(settings.data_dir),
            "-m",
            "fast",
            "-w",
            "-t",
            str(int(timeout)),
            "stop",
        ],
        "Stopping PostgreSQL",
        timeout=timeout + 10,
    )
    return f"stopped (pid {pid})"


def status(settings: MetastoreSettings) -> tuple[bool, str]:
    pid = server_pid(settings)
    if pid is None:
        return False, "not running"
    try:
        tables = _psql(
            settings,
            "select table_name from information_schema.tables "
            "where table_schema = 'public' and table_type = 'BASE TABLE'",
            database=DATABASE,
        ).split()
    except MetastoreError as exc:
        return False, f"process {pid} is up but does not answer: {exc}"
    return True, (
        f"running (pid {pid}): {settings.local_url}, {describe_tables(tables)}; "
        f"log {settings.log_file}"
    )
