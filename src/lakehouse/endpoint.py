"""A local Spark Thrift server (HiveServer2) that also serves Spark Connect: the `thrift` target.

`lakehouse endpoint start|stop|status`. The server is one Spark application started with
`spark-submit` from pyspark's own distribution, configured by the adapter's `spark_conf` (the
same Delta, metastore and warehouse settings as the embedded session) plus the Spark Connect
plugin. It listens on LAKEHOUSE_BIND_HOST (default localhost: no other host can reach it).
Its log and pid live in `$LAKEHOUSE_HOME/endpoint/`. With LAKEHOUSE_SPARK_MASTER=spark://...
its queries run on a Spark cluster's executors (`lakehouse cluster`, docs/deployment.md).

The embedded Derby metastore admits one process: while the endpoint runs, use the `thrift`
target (or give the embedded session another LAKEHOUSE_HOME), or share a PostgreSQL metastore
(LAKEHOUSE_METASTORE_URL, `lakehouse metastore start`, docs/metastore.md).
"""

from __future__ import annotations

import logging
import os
import re
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from dbt.adapters.sparkdelta.credentials import DELTA_METADATA_ONLY_QUERIES
from dbt.adapters.sparkdelta.session import (
    SPARK_IVY_DIR,
    SessionSettings,
    explain_launch_failure,
    is_secret,
    ivy_jar_name,
    one_resolution_at_a_time,
    spark_conf,
)
from lakehouse import processes
from lakehouse.settings import session_settings

THRIFT_SERVER_CLASS = "org.apache.spark.sql.hive.thriftserver.HiveThriftServer2"
CONNECT_PLUGIN = "org.apache.spark.sql.connect.SparkConnectPlugin"
# Where Spark Connect's server reads its pre-shared token when spark.connect.authenticate.token
# is not set (Spark 4.0's Connect config).
CONNECT_TOKEN_ENV = "SPARK_CONNECT_AUTHENTICATE_TOKEN"


class EndpointError(processes.ProcessError):
    """The endpoint could not be started, reached or stopped (one actionable message)."""


@dataclass(frozen=True)
class EndpointSettings:
    session: SessionSettings
    thrift_port: int = 10000
    connect_port: int = 15002
    # Where Thrift and Connect listen: an address of this host, or 0.0.0.0 for all of them.
    bind_host: str = "localhost"
    # Where Connect alone listens, when not at bind_host: loopback behind a TLS proxy on this
    # host (PySpark sends a token to other hosts only over TLS, which Spark 4.0's server lacks).
    connect_bind_host: str | None = None
    # Thrift authentication: NONE, or LDAP against ldap_url (users uid=<user>,<ldap_base_dn>).
    thrift_auth: str = "NONE"
    ldap_url: str | None = None
    ldap_base_dn: str | None = None
    # The account the endpoint's own health check signs in with (the thrift target's).
    user: str = "lakehouse"
    password: str | None = field(default=None, repr=False)
    # Spark Connect's pre-shared bearer token (Spark's spark.connect.authenticate.token): the
    # Connect side refuses clients without it. Only ever from the environment.
    connect_token: str | None = field(default=None, repr=False)

    @classmethod
    def from_env(cls, project_dir: str | os.PathLike | None = None) -> EndpointSettings:
        return cls(
            session=session_settings(Path(project_dir)) if project_dir else session_settings(),
            thrift_port=int(os.environ.get("LAKEHOUSE_THRIFT_PORT") or cls.thrift_port),
            connect_port=int(os.environ.get("LAKEHOUSE_SPARK_CONNECT_PORT") or cls.connect_port),
            bind_host=os.environ.get("LAKEHOUSE_BIND_HOST") or cls.bind_host,
            connect_bind_host=os.environ.get("LAKEHOUSE_CONNECT_BIND_HOST") or None,
            thrift_auth=(os.environ.get("LAKEHOUSE_THRIFT_AUTH") or cls.thrift_auth).upper(),
            ldap_url=os.environ.get("LAKEHOUSE_LDAP_URL") or None,
            ldap_base_dn=os.environ.get("LAKEHOUSE_LDAP_BASE_DN") or None,
            user=os.environ.get("LAKEHOUSE_THRIFT_USER") or cls.user,
            password=os.environ.get("LAKEHOUSE_THRIFT_PASSWORD") or None,
            connect_token=os.environ.get("LAKEHOUSE_CONNECT_TOKEN") or None,
        )

    def process_env(self) -> dict[str, str]:
        """The endpoint's environment: Spark reads the Connect token from it (kept off the
        command line, where `ps` would show it). Spark requires a token whenever the variable
        is set, even empty: an inherited one is dropped unless LAKEHOUSE_CONNECT_TOKEN sets it."""
        env = processes.spark_env()
        env.pop(CONNECT_TOKEN_ENV, None)
        if self.connect_token:
            env[CONNECT_TOKEN_ENV] = self.connect_token
        return env

    def hive_conf(self) -> dict[str, str]:
        """HiveServer2's own settings: where it listens and whom it lets in."""
        conf = {
            "hive.server2.thrift.bind.host": self.bind_host,
            "hive.server2.thrift.port": str(self.thrift_port),
            "hive.server2.transport.mode": "binary",
            "hive.server2.authentication": self.thrift_auth,
            # Under this endpoint's home, not /tmp/<user>: another endpoint on the host would
            # share the directory and delete it when it stops.
            "hive.server2.logging.operation.log.location": str(self.directory / "operation_logs"),
        }
        if self.thrift_auth == "LDAP":
            if not (self.ldap_url and self.ldap_base_dn):
                raise EndpointError(
                    "LAKEHOUSE_THRIFT_AUTH=LDAP needs LAKEHOUSE_LDAP_URL (ldap://host:389) and "
                    "LAKEHOUSE_LDAP_BASE_DN (the users' base, e.g. ou=people,dc=example,dc=com)."
                )
            conf["hive.server2.authentication.ldap.url"] = self.ldap_url
            conf["hive.server2.authentication.ldap.baseDN"] = self.ldap_base_dn
        elif self.thrift_auth != "NONE":
            raise EndpointError(
                f"LAKEHOUSE_THRIFT_AUTH={self.thrift_auth}: the local endpoint supports NONE and "
                "LDAP (see docs/deployment.md for Kerberos on a managed Thrift server)."
            )
        return conf

    @property
    def directory(self) -> Path:
        return self.session.home / "endpoint"

    @property
    def pid_file(self) -> Path:
        return self.directory / "endpoint.pid"

    @property
    def log_file(self) -> Path:
        return self.directory / "endpoint.log"

    @property
    def resolved_jars(self) -> Path:
        """`spark.jars.packages`, then the jars of its last resolution for the class path."""
        return self.directory / "resolved_jars.txt"

    @property
    def secret_file(self) -> Path:
        return self.directory / "secret.properties"

    @property
    def connect_host(self) -> str:
        """Where Spark Connect listens."""
        return self.connect_bind_host or self.bind_host

    @property
    def client_host(self) -> str:
        """The address a client on this host uses for Thrift."""
        return _client_address(self.bind_host)

    @property
    def connect_url(self) -> str:
        return f"sc://{_client_address(self.connect_host)}:{self.connect_port}"


def _client_address(bind_host: str) -> str:
    return "localhost" if bind_host in ("0.0.0.0", "::") else bind_host


# A jar in Spark's Ivy cache: <organisation>_<artifact>-<version>.jar.
_IVY_JAR = re.compile(r"^[^_]+_(?P<artifact>.+?)-(?P<version>\d[^-]*(?:-\d+)?)\.jar$")


def delta_jars(settings: EndpointSettings) -> list[Path]:
    """The jars of `spark.jars.packages` (Delta and its dependencies) that Spark does not ship
    itself, as their last resolution listed them; before one, the packages' own jars in Spark's
    Ivy cache (where the resolution puts them)."""
    listed = _listed_jars(settings)
    if listed is not None:
        return listed
    packages = spark_conf(settings.session)["spark.jars.packages"]
    ivy_home = Path(settings.session.conf.get("spark.jars.ivy") or Path.home() / SPARK_IVY_DIR)
    return [ivy_home / "jars" / ivy_jar_name(coordinate) for coordinate in packages.split(",")]


def _listed_jars(settings: EndpointSettings) -> list[Path] | None:
    """The jars of the last resolution, if it was of today's `spark.jars.packages`."""
    packages = spark_conf(settings.session)["spark.jars.packages"]
    if settings.resolved_jars.exists():
        listed = settings.resolved_jars.read_text().splitlines()
        if listed and listed[0] == packages:
            return [Path(jar) for jar in listed[1:]]
    return None


def not_shipped_by_spark(jars: list[str]) -> list[str]:
    """The resolved jars whose artifact Spark's own jars/ lacks: Delta, Delta Kernel, Unity
    Catalog's client. The others (Hadoop, Parquet, Jackson, log4j, at other versions) stay off
    the JVM's class path, before which they would shadow Spark's own."""
    shipped = {
        found.group("artifact")
        for found in map(_IVY_JAR.match, (f"x_{jar.name}" for jar in _spark_jars()))
        if found
    }
    kept = []
    for jar in jars:
        found = _IVY_JAR.match(Path(jar).name)
        if not found or found.group("artifact") not in shipped:
            kept.append(jar)
    return kept


def _spark_jars() -> list[Path]:
    return sorted((processes.spark_home() / "jars").glob("*.jar"))


def endpoint_conf(settings: EndpointSettings) -> dict[str, str]:
    """The embedded lakehouse's Spark configuration plus the Thrift and Connect endpoints."""
    conf = spark_conf(settings.session)
    conf.update(
        {
            # The Thrift server closes a session's class loader when the session ends, and with
            # it the loader that holds `spark.jars.packages`: Delta classes first needed after
            # that fail with NoClassDefFoundError. On the JVM's own class path they stay.
            # Joined with the profile's own entries (a metastore's JDBC driver).
            "spark.driver.extraClassPath": os.pathsep.join(
                [*map(str, delta_jars(settings)), conf.get("spark.driver.extraClassPath", "")]
            ).rstrip(os.pathsep),
            "spark.app.name": "lakehouse-endpoint",
            # For every client (dbt sets it itself): see DELTA_METADATA_ONLY_QUERIES.
            DELTA_METADATA_ONLY_QUERIES: "false",
            "spark.plugins": CONNECT_PLUGIN,
            "spark.connect.grpc.binding.address": settings.connect_host,
            "spark.connect.grpc.binding.port": str(settings.connect_port),
            **{f"spark.hadoop.{key}": value for key, value in settings.hive_conf().items()},
        }
    )
    return conf


def spark_submit_command(settings: EndpointSettings) -> list[str]:
    spark_submit = processes.spark_home() / "bin" / "spark-submit"
    command = [str(spark_submit), "--class", THRIFT_SERVER_CLASS]
    conf = endpoint_conf(settings)
    for key, value in conf.items():
        if not is_secret(key):
            command += ["--conf", f"{key}={value}"]
    # Passwords (a metastore's) go in a file only this user reads, not on the command line.
    secret = {key: value for key, value in conf.items() if is_secret(key)}
    if secret:
        command += ["--properties-file", str(write_secret_properties(settings, secret))]
    # `spark-internal`: the main class ships with Spark, there is no application jar.
    command.append("spark-internal")
    for key, value in settings.hive_conf().items():
        command += ["--hiveconf", f"{key}={value}"]
    return command


def write_secret_properties(settings: EndpointSettings, values: dict[str, str]) -> Path:
    """A Java properties file of mode 0600 (spark-submit reads it at launch)."""
    settings.directory.mkdir(parents=True, exist_ok=True)
    path = settings.secret_file
    path.unlink(missing_ok=True)  # a new file gets mode 0600; an old one keeps its own
    escape = str.maketrans({"\\": "\\\\", "\n": "\\n", "\r": "\\r"})
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(descriptor, "w") as properties:
        for key, value in values.items():
            value = value.translate(escape)
            if value[:1] in (" ", "\t"):
                value = "\\" + value  # Java's Properties drops unescaped leading blanks
            properties.write(f"{key}={value}\n")
    return path


# Run by spark-submit after it resolved `spark.jars.packages`: lists the jars it resolved
# (spark-submit hands a Python application the packages' jars on its PYTHONPATH).
_LIST_RESOLVED_JARS = """\
import os, sys
paths = os.environ.get("PYTHONPATH", "").split(os.pathsep)
jars = [path for path in paths if path.endswith(".jar")]
with open(sys.argv[1], "w") as listed:
    listed.write("\\n".join(jars))
"""


def _resolve_delta_jars(settings: EndpointSettings) -> None:
    """Let spark-submit resolve the Delta packages (an application that lists what it
    resolved) when they are not yet resolved; the list names the jars for the class path."""
    listed = _listed_jars(settings)
    if listed is not None and all(jar.exists() for jar in listed):
        return
    packages = spark_conf(settings.session)["spark.jars.packages"]
    lister = settings.directory / "resolve_packages.py"
    lister.write_text(_LIST_RESOLVED_JARS)
    listed = settings.directory / "resolved_jars.tmp"
    command = [spark_submit_command(settings)[0]]
    conf = spark_conf(settings.session)
    for key in ("packages", "repositories", "ivySettings", "ivy"):
        if conf.get(f"spark.jars.{key}"):
            command += ["--conf", f"spark.jars.{key}={conf[f'spark.jars.{key}']}"]
    # The same lock as the adapter's session start: two resolutions into one Ivy cache at
    # once leave it broken ("impossible to move part file", files of size 0).
    with one_resolution_at_a_time(), open(settings.log_file, "ab") as log:
        start_offset = log.tell()
        result = subprocess.run(
            [*command, str(lister), str(listed)],
            stdout=log,
            stderr=subprocess.STDOUT,
            env=processes.spark_env(),
        )
    resolved = listed.read_text().split() if listed.exists() else []
    missing = [jar for jar in resolved if not Path(jar).exists()]
    if result.returncode != 0 or not resolved or missing:
        output = processes.output_since(settings.log_file, start_offset)
        raise EndpointError(explain_launch_failure(output, settings.log_file))
    settings.resolved_jars.write_text("\n".join([packages, *not_shipped_by_spark(resolved)]))
    listed.unlink()


def accepts_sessions(settings: EndpointSettings) -> bool:
    """True when the Thrift port opens a real HiveServer2 session and runs a query."""
    return session_error(settings) is None


def session_error(settings: EndpointSettings) -> str | None:
    """Why the Thrift port does not open a HiveServer2 session and run a query; None when it
    does."""
    from pyhive import hive

    try:
        with _quiet_thrift_socket():
            connection = hive.connect(
                host=settings.client_host,
                port=settings.thrift_port,
                username=settings.user,
                password=settings.password if settings.thrift_auth == "LDAP" else None,
                auth=settings.thrift_auth,
            )
    except Exception as exc:
        return f"{type(exc).__name__}: {exc}"
    try:
        cursor = connection.cursor()
        cursor.execute("select 1")
        rows = cursor.fetchall()
        return None if rows == [(1,)] else f"select 1 returned {rows}"
    except Exception as exc:
        return f"{type(exc).__name__}: {exc}"
    finally:
        connection.close()


@contextmanager
def _quiet_thrift_socket() -> Iterator[None]:
    """Thrift's TSocket logs `Could not connect to any of [...]` at ERROR for every refused
    attempt, and dbt-spark sets the level of `thrift.transport` itself, so only this logger's
    own level silences it. A refused attempt while the endpoint starts is expected; the caller
    reports the error."""
    socket_logger = logging.getLogger("thrift.transport.TSocket")
    level = socket_logger.level
    socket_logger.setLevel(logging.CRITICAL)
    try:
        yield
    finally:
        socket_logger.setLevel(level)


def wait_for_sessions(
    settings: EndpointSettings, timeout: float, running: Callable[[], bool]
) -> str | None:
    """Wait until the endpoint accepts a session, while `running()`; None when it does, else
    the last error. Says it is waiting in one line on stderr, not one per attempt."""
    print(
        f"waiting up to {timeout:.0f}s for thrift://{settings.client_host}:"
        f"{settings.thrift_port} to accept a session ...",
        file=sys.stderr,
        flush=True,
    )
    deadline = time.monotonic() + timeout
    error = "not tried"
    while running():
        error = session_error(settings)
        if error is None or time.monotonic() >= deadline:
            return error
        time.sleep(2)
    return error


LOOPBACK = {"localhost", "127.0.0.1", "::1"}


def check_exposure(settings: EndpointSettings) -> None:
    """Refuse to listen beyond loopback for clients that need not authenticate: once either side
    does, both must (a Connect port on loopback may still be exposed by a proxy)."""
    if settings.bind_host not in LOOPBACK:
        exposed = f"LAKEHOUSE_BIND_HOST={settings.bind_host}"
    elif settings.connect_host not in LOOPBACK:
        exposed = f"LAKEHOUSE_CONNECT_BIND_HOST={settings.connect_host}"
    else:
        return
    if settings.thrift_auth == "NONE":
        raise EndpointError(
            f"{exposed} lets other hosts reach the endpoint, but "
            "its Thrift side accepts anyone (LAKEHOUSE_THRIFT_AUTH=NONE): set "
            "LAKEHOUSE_THRIFT_AUTH=LDAP with LAKEHOUSE_LDAP_URL and LAKEHOUSE_LDAP_BASE_DN, or "
            "bind to localhost (docs/deployment.md)."
        )
    if not settings.connect_token:
        raise EndpointError(
            f"{exposed} lets other hosts reach the endpoint, but its Spark Connect side accepts "
            "anyone: set LAKEHOUSE_CONNECT_TOKEN (and put a TLS proxy in front of it, "
            "LAKEHOUSE_CONNECT_BIND_HOST=127.0.0.1), or bind to localhost (docs/deployment.md)."
        )


def start(settings: EndpointSettings, timeout: float = 300.0) -> str:
    """Start the endpoint in the background and wait until it accepts a session."""
    pid = processes.read_pid(settings.pid_file)
    if pid is not None:
        if accepts_sessions(settings):
            return f"already running (pid {pid}): {status_line(settings, pid)}"
        raise EndpointError(
            f"An endpoint process (pid {pid}) is running but not answering on port "
            f"{settings.thrift_port}; run `lakehouse endpoint stop` first."
        )
    check_exposure(settings)
    processes.check_java()
    processes.check_ports_free(
        {
            settings.thrift_port: "LAKEHOUSE_THRIFT_PORT",
            settings.connect_port: "LAKEHOUSE_SPARK_CONNECT_PORT",
        }
    )
    settings.directory.mkdir(parents=True, exist_ok=True)
    settings.session.log_dir.mkdir(parents=True, exist_ok=True)
    settings.session.tmp_dir.mkdir(parents=True, exist_ok=True)
    _resolve_delta_jars(settings)
    start_offset = processes.launch(
        spark_submit_command(settings), settings.pid_file, settings.log_file, settings.process_env()
    )
    pid = processes.read_pid(settings.pid_file)
    error = wait_for_sessions(
        settings, timeout, lambda: processes.read_pid(settings.pid_file) is not None
    )
    if error is None:
        return f"started (pid {pid}): {status_line(settings, pid)}"
    if processes.read_pid(settings.pid_file) is None:
        settings.pid_file.unlink(missing_ok=True)
        output = processes.output_since(settings.log_file, start_offset)
        raise EndpointError(explain_launch_failure(output, settings.log_file))
    stop(settings)
    raise EndpointError(
        f"The endpoint did not accept a session within {timeout:.0f}s ({error}); it was "
        f"stopped. Log: {settings.log_file}"
    )


def stop(settings: EndpointSettings) -> str:
    pid = processes.stop(settings.pid_file)
    settings.secret_file.unlink(missing_ok=True)
    return "not running" if pid is None else f"stopped (pid {pid})"


def status_line(settings: EndpointSettings, pid: int) -> str:
    return (
        f"thrift://{settings.client_host}:{settings.thrift_port} and {settings.connect_url}, "
        f"home {settings.session.home}, log {settings.log_file}"
    )


def status(settings: EndpointSettings) -> tuple[bool, str]:
    """(healthy, one line): running and accepting sessions, or why not."""
    pid = processes.read_pid(settings.pid_file)
    if pid is None:
        return False, "not running"
    if accepts_sessions(settings):
        return True, f"running (pid {pid}): {status_line(settings, pid)}"
    return False, f"process {pid} is up but does not accept sessions yet; log {settings.log_file}"
