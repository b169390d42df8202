"""A shared Hive metastore on PostgreSQL: `lakehouse metastore start|stop|status|init`.

The embedded Derby metastore (the default) admits one process at a time and keeps a view's
text in a VARCHAR(32672). A metastore in PostgreSQL lets the endpoint, embedded dbt runs and
other clients share one catalog at once. The profile's `local` output points the session at
it when LAKEHOUSE_METASTORE_URL is set (docs/metastore.md).

`start` runs a PostgreSQL server from Debian's packages (`postgresql`) for local use: data
directory, log and socket under `$LAKEHOUSE_HOME/metastore-pg/`, listening on 127.0.0.1 at
LAKEHOUSE_METASTORE_PORT (default 5433, beside a system PostgreSQL on 5432). It creates the
`metastore` database and its owner, initialises the Hive schema once, and prints the variables
to export. `init` initialises the schema of any PostgreSQL metastore (production: once, before
the first Spark process connects).

Why the schema is created up front, in one process: Spark lets Hive create the metastore tables
on first use (`datanucleus.schema.autoCreateAll`) only for embedded Derby. Several processes
doing that at once on a shared database deadlock on each other's DDL, and Hive creates some
tables only when first needed, so "one serial Spark session that exercises the catalog" leaves
tables for later processes to race on. Here one JVM creates every table of Hive's metadata
(package.jdo in the hive-metastore jar) through DataNucleus, with exactly the DataNucleus
settings Hive itself uses (read from HiveConf, so names and types match what Hive expects),
then starts Hive's metastore once to record the schema version and create the default
database. Every later process runs with Hive's defaults: no DDL, schema version verified.
"""

from __future__ import annotations

import glob
import os
import pwd
import re
import secrets
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

from dbt.adapters.sparkdelta.session import SessionSettings, redact_jdbc_url
from lakehouse import processes
from lakehouse.settings import session_settings

DEFAULT_PORT = 5433
DEFAULT_DRIVER = "/usr/share/java/postgresql.jar"
DRIVER_CLASS = "org.postgresql.Driver"
DATABASE = "metastore"
DEFAULT_USER = "lakehouse"
# The account PostgreSQL runs as when the CLI runs as root (the server refuses root).
SERVER_ACCOUNT = "postgres"
HIVE_SCHEMA_VERSION = "2.3.0"
INSTALL_HINT = "apt-get install -y postgresql libpostgresql-jdbc-java"


class MetastoreError(processes.ProcessError):
    """The metastore could not be started, reached, initialised or stopped."""


@dataclass(frozen=True)
class MetastoreSettings:
    session: SessionSettings
    port: int = DEFAULT_PORT
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
        return f"jdbc:postgresql://127.0.0.1:{self.port}/{DATABASE}"

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


# ---------------------------------------------------------------------------------------------
# What must be installed


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


def check_driver(driver: Path) -> None:
    if not driver.is_file():
        raise MetastoreError(
            f"The PostgreSQL JDBC driver {driver} does not exist: {INSTALL_HINT} (Debian's "
            "libpostgresql-jdbc-java installs /usr/share/java/postgresql.jar), or point "
            "LAKEHOUSE_METASTORE_DRIVER at the driver's jar."
        )


# ---------------------------------------------------------------------------------------------
# The local server


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
        options = (
            f"-p {settings.port} -k {settings.directory} -c listen_addresses=127.0.0.1 "
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
            "select count(*) from information_schema.tables where table_schema = 'public'",
            database=DATABASE,
        ).strip()
    except MetastoreError as exc:
        return False, f"process {pid} is up but does not answer: {exc}"
    return True, (
        f"running (pid {pid}): {settings.local_url}, {tables} metastore tables; "
        f"log {settings.log_file}"
    )


# ---------------------------------------------------------------------------------------------
# The Hive schema


def hive_metastore_jar() -> Path:
    jars = sorted((processes.spark_home() / "jars").glob("hive-metastore-*.jar"))
    if not jars:
        raise MetastoreError(f"No hive-metastore jar in {processes.spark_home() / 'jars'}.")
    return jars[-1]


def metadata_classes(jar: Path | None = None) -> list[str]:
    """The persistent classes of Hive's metastore, from its JDO metadata (package.jdo)."""
    with zipfile.ZipFile(jar or hive_metastore_jar()) as archive:
        root = ET.fromstring(archive.read("package.jdo"))
    return [
        f"{package.get('name')}.{cls.get('name')}"
        for package in root.iter("package")
        for cls in package.iter("class")
    ]


def metadata_tables(jar: Path | None = None) -> set[str]:
    """The tables (upper case) Hive's JDO metadata maps its classes and join tables to; a
    class stored embedded in another's table has none of its own."""
    with zipfile.ZipFile(jar or hive_metastore_jar()) as archive:
        root = ET.fromstring(archive.read("package.jdo"))
    return {
        element.get("table").upper()
        for element in root.iter()
        if element.get("table")
        and (element.tag == "field" or element.get("embedded-only") != "true")
    }


def init_schema(
    settings: MetastoreSettings, url: str, password: str | None, timeout: float = 600.0
) -> str:
    """Create the Hive schema in the database at `url` unless it holds one; check every table
    exists afterwards. Runs in a child process (its own JVM), so a caller's Spark session is
    untouched. Returns what was done."""
    check_driver(settings.driver)
    settings.directory.mkdir(parents=True, exist_ok=True)
    env = {
        **processes.spark_env(),
        "LAKEHOUSE_METASTORE_URL": url,
        "LAKEHOUSE_METASTORE_USER": settings.user,
        "LAKEHOUSE_METASTORE_PASSWORD": password or "",
        "LAKEHOUSE_METASTORE_DRIVER": str(settings.driver),
        "LAKEHOUSE_INIT_WAREHOUSE": settings.session.warehouse_dir,
        "LAKEHOUSE_INIT_HOME": str(settings.directory / "init-session"),
    }
    with open(settings.init_log, "ab") as log:
        offset = log.tell()
        try:
            result = subprocess.run(
                [sys.executable, "-m", "lakehouse.metastore", "--init-schema"],
                env=env,
                stdout=subprocess.PIPE,
                stderr=log,
                timeout=timeout,
            )
        except subprocess.TimeoutExpired:
            raise MetastoreError(
                f"Initialising the Hive schema at {redact_jdbc_url(url)} took more than "
                f"{timeout:.0f}s. Log: {settings.init_log}"
            ) from None
    report = result.stdout.decode("utf-8", "replace").strip()
    if result.returncode != 0:
        output = processes.output_since(settings.init_log, offset).strip().splitlines()
        reason = report or (output[-1] if output else "no output")
        raise MetastoreError(
            f"Initialising the Hive schema at {redact_jdbc_url(url)} failed: {reason} "
            f"Log: {settings.init_log}"
        )
    return report


def _init_schema_here() -> int:
    """The child process of `init_schema`: one JVM, DataNucleus, then Hive once."""
    from pyspark import SparkConf, SparkContext
    from pyspark.java_gateway import launch_gateway
    from pyspark.sql import SparkSession

    url = os.environ["LAKEHOUSE_METASTORE_URL"]
    user = os.environ["LAKEHOUSE_METASTORE_USER"]
    password = os.environ["LAKEHOUSE_METASTORE_PASSWORD"]
    home = Path(os.environ["LAKEHOUSE_INIT_HOME"])
    home.mkdir(parents=True, exist_ok=True)
    jdo = {
        "javax.jdo.option.ConnectionURL": url,
        "javax.jdo.option.ConnectionDriverName": DRIVER_CLASS,
        "javax.jdo.option.ConnectionUserName": user,
        "javax.jdo.option.ConnectionPassword": password,
    }
    conf = SparkConf(loadDefaults=False).setAll(
        [
            ("spark.master", "local[1]"),
            ("spark.app.name", "lakehouse-metastore-init"),
            ("spark.driver.memory", "512m"),
            ("spark.driver.extraClassPath", os.environ["LAKEHOUSE_METASTORE_DRIVER"]),
            ("spark.driver.extraJavaOptions", f"-Dderby.system.home={home}"),
            ("spark.ui.enabled", "false"),
            ("spark.sql.catalogImplementation", "hive"),
            ("spark.sql.warehouse.dir", os.environ["LAKEHOUSE_INIT_WAREHOUSE"]),
            *((f"spark.hadoop.{key}", value) for key, value in jdo.items()),
            # Hive, started once below, records the schema version it finds missing.
            ("spark.hadoop.hive.metastore.schema.verification", "false"),
            ("spark.hadoop.hive.metastore.schema.verification.record.version", "true"),
        ]
    )
    gateway = launch_gateway(conf)
    jvm = gateway.jvm
    connection = _jdbc_connection(jvm, url, user, password)
    try:
        existing = _tables(gateway, connection)
        if "VERSION" in existing and _schema_version(connection):
            missing = metadata_tables() - existing
            if missing:
                print(f"the metastore lacks tables {sorted(missing)}; it was not made here.")
                return 1
            print(f"schema {_schema_version(connection)} already there")
            return 0
        _create_tables(jvm, jdo)
        # Hive's own start: the VERSION row, the default database, the admin and public roles.
        SparkContext(conf=conf, gateway=gateway)
        spark = SparkSession.builder.enableHiveSupport().getOrCreate()
        spark.sql("show databases").collect()
        missing = metadata_tables() - _tables(gateway, connection)
        version = _schema_version(connection)
        spark.stop()
    finally:
        connection.close()
    if missing or version != HIVE_SCHEMA_VERSION:
        print(f"after initialisation: tables missing {sorted(missing)}, version {version!r}.")
        return 1
    print(f"schema {version} initialised ({len(metadata_tables())} tables)")
    return 0


def _jdbc_connection(jvm, url: str, user: str, password: str):
    properties = jvm.java.util.Properties()
    properties.setProperty("user", user)
    properties.setProperty("password", password)
    return jvm.java.sql.DriverManager.getConnection(url, properties)


def _tables(gateway, connection) -> set[str]:
    types = gateway.new_array(gateway.jvm.java.lang.String, 1)
    types[0] = "TABLE"
    result = connection.getMetaData().getTables(None, None, "%", types)
    names = set()
    while result.next():
        names.add(result.getString("TABLE_NAME").upper())
    result.close()
    return names


def _schema_version(connection) -> str | None:
    statement = connection.createStatement()
    try:
        result = statement.executeQuery('select "SCHEMA_VERSION" from "VERSION"')
        return result.getString(1) if result.next() else None
    finally:
        statement.close()


def _create_tables(jvm, jdo: dict[str, str]) -> None:
    """Every table of Hive's JDO metadata, with the DataNucleus settings Hive uses."""
    hive_conf = jvm.org.apache.hadoop.hive.conf.HiveConf()
    for key, value in jdo.items():
        hive_conf.set(key, value)
    hive_conf.set("datanucleus.schema.autoCreateAll", "true")
    properties = jvm.java.util.Properties()
    # As Hive's ObjectStore does: every datanucleus.* and javax.jdo.* setting of the HiveConf.
    entries = hive_conf.iterator()
    while entries.hasNext():
        entry = entries.next()
        if entry.getKey().startswith(("datanucleus.", "javax.jdo.")):
            properties.setProperty(entry.getKey(), hive_conf.get(entry.getKey()))
    factory = jvm.javax.jdo.JDOHelper.getPersistenceManagerFactory(properties)
    try:
        classes = jvm.java.util.HashSet()
        for name in metadata_classes():
            classes.add(name)
        store = factory.getNucleusContext().getStoreManager()
        store.createSchemaForClasses(classes, jvm.java.util.Properties())
    finally:
        factory.close()


if __name__ == "__main__" and sys.argv[1:] == ["--init-schema"]:
    if shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
        print("Java not found: install a JDK 17 or set JAVA_HOME.")
        sys.exit(1)
    sys.exit(_init_schema_here())
