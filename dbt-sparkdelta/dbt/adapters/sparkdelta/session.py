"""The embedded Spark session with Delta Lake: the `session` connection method of the adapter.

dbt (through `SparkDeltaConnectionManager.open`), Python models submitted with `session`, and
any tool of a project that wants the same session (data loaders, tests, benchmarks) get their
SparkSession from `get_or_create_session`, so the Delta jars, the metastore, the warehouse and
the tuning are configured once.

Settings come from the profile: `session_home` (metastore, warehouse and logs; a relative path
is taken from the project directory), `warehouse_dir` (the tables' storage when not under the
home: a path, or a URI such as s3a://bucket/warehouse, kept as given), `spark_log_level`,
`server_side_parameters` (any Spark setting; they override the defaults below, which suit a
2-core machine) and `spark_conf_file` (a spark-defaults.conf style file whose settings override
all of those: the one place for a cluster's executors, memory and connectors).
"""

from __future__ import annotations

import fcntl
import glob
import logging
import os
import re
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

SCALA_BINARY_VERSION = "2.13"
DEFAULT_HOME = ".sparkdelta"
_LOG4J_CONFIG = Path(__file__).with_name("log4j2.properties")
_session_lock = threading.Lock()


class DeltaRuntimeUnavailable(RuntimeError):
    """The JVM could not start with the Delta Lake jars (one short, actionable message)."""


class MetastoreUnavailable(DeltaRuntimeUnavailable):
    """A metastore database given by its JDBC URL cannot be used (driver, network, schema)."""


class MetastoreInUse(MetastoreUnavailable):
    """The session home's embedded Derby metastore is booted by another process."""


def check_embedded_metastore_free(metastore_dir: Path, grace_seconds: float = 15.0) -> None:
    """Embedded Derby admits one process: while one runs it holds an exclusive lock on
    `dbex.lck` (released when that process ends, however it ends). Without this check a second
    process fails deep in Hive ("Unable to instantiate SessionHiveMetaStoreClient"). A JVM
    still shutting down after its command returned frees it within seconds: wait that long."""
    lock_file = metastore_dir / "dbex.lck"
    deadline = time.monotonic() + grace_seconds
    while _locked_by_another_process(lock_file):
        if time.monotonic() >= deadline:
            raise MetastoreInUse(
                f"The embedded metastore in {metastore_dir} is in use by another Spark "
                "process (a Thrift/Connect endpoint or another session on the same session "
                "home); it admits one process. Use that process (its thrift or Spark Connect "
                "target), stop it, or give this session another session_home."
            )
        time.sleep(0.2)


def _locked_by_another_process(lock_file: Path) -> bool:
    try:
        handle = open(lock_file, "rb+")
    except FileNotFoundError:
        return False
    with handle:
        try:
            fcntl.lockf(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            return True
        fcntl.lockf(handle, fcntl.LOCK_UN)
    return False


def one_resolution_at_a_time():
    """An exclusive lock, per user and machine, held while a JVM starts: spark-submit resolves
    the Delta jars into the user's Ivy cache, which two processes updating it at once can leave
    inconsistent (dbt runs, or test workers, starting together). Released when the JVM is up."""
    lock = open(Path(tempfile.gettempdir()) / f"sparkdelta-jvm-start-{os.getuid()}.lock", "a")
    fcntl.flock(lock, fcntl.LOCK_EX)
    return lock  # closing it releases the lock


class _JvmProcess(subprocess.Popen):
    """The JVM's process, started with no Python code between fork and exec.

    PySpark starts it with a `preexec_fn` that ignores SIGINT, so that Ctrl-C at the terminal
    stops dbt, not the JVM under it. Python run in the forked child aborts it (SIGABRT; the
    launch log holds only gRPC's "epoll_wait error: Bad file descriptor") when gRPC threads
    are live in this process: a Spark Connect client, as with Python models submitted over
    Connect before the session starts. Here a shell ignores SIGINT and execs the command: an
    ignored signal stays ignored across exec, and the JVM keeps the pid and process group.
    """

    def __init__(self, args, *, preexec_fn=None, **kwargs):
        ignoring_sigint = ["/bin/sh", "-c", 'trap "" INT; exec "$@"', "sh"]
        super().__init__([*ignoring_sigint, *args], **kwargs)


@contextmanager
def _fork_safe_jvm_start() -> Iterator[None]:
    """PySpark's `launch_gateway` starts the JVM as a `_JvmProcess` (callers hold `_session_lock`,
    so no other thread starts one meanwhile)."""
    from pyspark import java_gateway

    original = java_gateway.Popen
    java_gateway.Popen = _JvmProcess
    try:
        yield
    finally:
        java_gateway.Popen = original


class SessionHomeMismatch(RuntimeError):
    """The session home's embedded metastore keeps its tables in another home's warehouse."""


METASTORE_URL = "spark.hadoop.javax.jdo.option.ConnectionURL"
METASTORE_USER = "spark.hadoop.javax.jdo.option.ConnectionUserName"
METASTORE_PASSWORD = "spark.hadoop.javax.jdo.option.ConnectionPassword"
# Seconds to wait for the metastore database before giving up with a clear message.
METASTORE_LOGIN_TIMEOUT = 15


def delta_version() -> str:
    """The Delta version of the JVM jars: always the one of the installed `delta-spark` wheel."""
    return metadata.version("delta-spark")


def spark_line() -> str:
    """The installed pyspark's Spark line, e.g. "4.1" (the JVM's Spark is pyspark's own)."""
    return ".".join(metadata.version("pyspark").split(".")[:2])


def _release(version: str) -> tuple[int, int]:
    major, minor = re.match(r"(\d+)\.(\d+)", version).groups()
    return int(major), int(minor)


# The Spark lines each Delta release is built for (delta-io/delta's release builds); a newer
# Delta than these is taken at its word (its wheel's own pyspark range).
SPARK_LINES_OF_DELTA = {
    (4, 0): ("4.0",),
    (4, 1): ("4.0", "4.1"),
    (4, 2): ("4.0", "4.1"),
    (4, 3): ("4.0", "4.1"),
    (4, 4): ("4.0", "4.1", "4.2"),
}


def delta_coordinates(version: str | None = None, spark: str | None = None) -> list[str]:
    """The Delta jars for the installed delta-spark and pyspark. Delta 4.0 was built for Spark
    4.0 alone (`delta-spark_2.13`); from 4.1 on, each Spark line has its build, named by it
    (`delta-spark_4.1_2.13`). Their dependencies (Delta Kernel, Unity Catalog's client) are
    resolved with them. A pair with no Delta build (delta-spark 4.0 beside pyspark 4.2: the
    4.0 wheel does not bound pyspark) is refused, naming the releases that fit."""
    version = version or delta_version()
    spark = spark or spark_line()
    lines = SPARK_LINES_OF_DELTA.get(_release(version))
    if lines is not None and spark not in lines:
        fitting = [f"{major}.{minor}" for (major, minor), of in SPARK_LINES_OF_DELTA.items()
                   if spark in of]  # fmt: skip
        raise DeltaRuntimeUnavailable(
            f"delta-spark {version} is built for Spark {' and '.join(lines)}, not for the "
            f"installed pyspark's Spark {spark}: install delta-spark "
            f"{' or '.join(fitting) or 'of a release built for it'} (or pyspark "
            f"{lines[-1]}.x)."
        )
    suffix = SCALA_BINARY_VERSION
    if _release(version) >= (4, 1):
        suffix = f"{spark}_{SCALA_BINARY_VERSION}"
    return [f"io.delta:delta-spark_{suffix}:{version}", f"io.delta:delta-storage:{version}"]


# Spark 4's Ivy directory under the user's home when `spark.jars.ivy` is not set: its `cache`
# holds the resolution's descriptors, its `jars` the resolved jars.
SPARK_IVY_DIR = ".ivy2.5.2"


def ivy_jar_name(coordinate: str) -> str:
    """The file name Spark's Ivy gives a resolved `group:artifact:version` in its `jars` folder."""
    organisation, artifact, version = coordinate.split(":")
    return f"{organisation}_{artifact}-{version}.jar"


def delta_release_at_least(release: str) -> bool:
    """Whether the installed Delta is `release` (e.g. "4.4") or newer."""
    return _release(delta_version()) >= _release(release)


@dataclass(frozen=True)
class SessionSettings:
    """Where the embedded session keeps its state, and the Spark settings that override ours."""

    home: Path
    log_level: str = "error"
    conf: dict[str, str] = field(default_factory=dict)
    warehouse: str | None = None  # default: <home>/warehouse

    @classmethod
    def from_profile(
        cls, fields: Mapping[str, Any], project_dir: str | os.PathLike | None = None
    ) -> SessionSettings:
        """From the profile's `session_home`, `spark_log_level` and `server_side_parameters`."""
        base = Path(project_dir or os.getcwd())
        home = base / Path(fields.get("session_home") or DEFAULT_HOME).expanduser()
        parameters = fields.get("server_side_parameters") or {}
        conf = {str(k): str(v) for k, v in parameters.items() if v not in (None, "")}
        if fields.get("spark_conf_file"):
            conf.update(read_spark_conf_file(base / Path(fields["spark_conf_file"]).expanduser()))
        warehouse = fields.get("warehouse_dir") or None
        if warehouse and not is_uri(warehouse):
            warehouse = str((base / Path(warehouse).expanduser()).resolve())
        return cls(
            home=home.resolve(),
            log_level=str(fields.get("spark_log_level") or cls.log_level),
            conf=conf,
            warehouse=warehouse,
        )

    def with_conf(self, extra: Mapping[str, str]) -> SessionSettings:
        return SessionSettings(self.home, self.log_level, {**self.conf, **extra}, self.warehouse)

    @property
    def warehouse_dir(self) -> str:
        """Where managed tables live: a local path or a URI (s3a://, abfss://, hdfs://)."""
        return self.warehouse or str(self.home / "warehouse")

    @property
    def metastore_dir(self) -> Path:
        return self.home / "metastore_db"

    @property
    def log_dir(self) -> Path:
        return self.home / "logs"

    @property
    def tmp_dir(self) -> Path:
        """The JVM's temporary directory: Hive's session resources and Spark's scratch files stay
        in this home, so two homes on one host never share (or clean up) each other's."""
        return self.home / "tmp"

    @property
    def launch_log(self) -> Path:
        return self.log_dir / "spark-driver.log"


def is_uri(location: str) -> bool:
    """s3a://bucket/x, hdfs://nn/x, file:///x: a location with a scheme, not a local path."""
    return bool(re.match(r"^[A-Za-z][A-Za-z0-9+.-]*:/", location))


def redact_jdbc_url(url: str) -> str:
    """A JDBC URL fit for messages and logs: no password parameter, no user:password@."""
    url = re.sub(r"(?i)((?:password|pwd)=)[^&;]*", r"\1***", url)
    return re.sub(r"(//[^/@:]*:)[^/@]*@", r"\1***@", url)


def is_secret(key: str) -> bool:
    """A Spark setting whose value must not appear on a command line or in a log."""
    return bool(re.search(r"(?i)password|secret", key))


def command_line_conf(values: Mapping[str, str]):
    """The settings a JVM may be launched with: PySpark's launch_gateway puts them on
    spark-submit's command line, which any local user can read, so no password. The JVM gets
    the secret ones over the gateway (the SparkContext's conf, a JDBC connection)."""
    from pyspark import SparkConf

    return SparkConf(loadDefaults=False).setAll(
        [(key, value) for key, value in values.items() if not is_secret(key)]
    )


def external_metastore_url(conf: Mapping[str, str]) -> str | None:
    """The metastore database's JDBC URL when it is not the embedded Derby."""
    url = conf.get(METASTORE_URL, "")
    return None if not url or url.startswith("jdbc:derby:") else url


def read_spark_conf_file(path: Path) -> dict[str, str]:
    """Spark settings from a spark-defaults.conf style file: `key value` or `key=value` per
    line, `#` comments."""
    try:
        text = path.read_text()
    except OSError as exc:
        raise DeltaRuntimeUnavailable(
            f"spark_conf_file {path}: cannot be read ({exc.strerror}); fix the path in the "
            "profile or remove the setting."
        ) from None
    conf = {}
    for number, line in enumerate(text.splitlines(), start=1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        found = re.match(r"^(\S+?)\s*(?:=|\s)\s*(.*)$", line)
        if not found or not found.group(2):
            raise DeltaRuntimeUnavailable(
                f"spark_conf_file {path}, line {number}: expected `key value` or `key=value`, "
                f"got {line!r}."
            )
        conf[found.group(1)] = found.group(2).strip()
    return conf


def spark_conf(settings: SessionSettings) -> dict[str, str]:
    """The Spark configuration of the embedded session (pure: no JVM is started)."""
    java_options = " ".join(
        [
            f"-Dlog4j2.configurationFile=file:{_LOG4J_CONFIG}",
            f"-Dsparkdelta.log.level={settings.log_level}",
            f"-Dderby.system.home={settings.home}",
            f"-Dderby.stream.error.file={settings.log_dir / 'derby.log'}",
            f"-Djava.io.tmpdir={settings.tmp_dir}",
            # The throughput collector: a dbt build is batch work, and on 2 cores G1's
            # concurrent threads cost more than its shorter pauses save (30 tests of MERGE
            # models: 6% less CPU, 3% less time).
            "-XX:+UseParallelGC",
        ]
    )
    partitions = settings.conf.get("spark.sql.shuffle.partitions", "4")
    conf = {
        "spark.master": "local[2]",
        "spark.app.name": "sparkdelta",
        "spark.driver.memory": "4g",
        "spark.driver.extraJavaOptions": java_options,
        # Delta Lake, resolved by Maven coordinates (local ~/.m2, a mirror, or Ivy settings).
        "spark.jars.packages": ",".join(delta_coordinates()),
        "spark.sql.extensions": "io.delta.sql.DeltaSparkSessionExtension",
        "spark.sql.catalog.spark_catalog": "org.apache.spark.sql.delta.catalog.DeltaCatalog",
        # A persistent Hive metastore (embedded Derby) and warehouse, so tables survive runs.
        "spark.sql.catalogImplementation": "hive",
        "spark.sql.warehouse.dir": settings.warehouse_dir,
        "spark.hadoop.javax.jdo.option.ConnectionURL": (
            f"jdbc:derby:;databaseName={settings.metastore_dir};create=true"
        ),
        # Small machine: few partitions, no UI, no progress bar.
        "spark.sql.shuffle.partitions": partitions,
        "spark.default.parallelism": partitions,
        # Each task rebuilding a table's state generates the code of a projection of Delta's
        # log actions (larger in Delta 4.4): at Delta's default of 50 tasks, 4.4 ran a build's
        # statements 1.4 times slower than 4.0.1; at 4, within 10%.
        "spark.databricks.delta.snapshotPartitions": partitions,
        # VACUUM lists the table directory with this many tasks (default 10000: minutes here).
        "spark.sql.sources.parallelPartitionDiscovery.parallelism": partitions,
        "spark.ui.enabled": "false",
        "spark.ui.showConsoleProgress": "false",
        "spark.sql.session.timeZone": "UTC",
        # On a JVM or system zone other than UTC, Delta 4.0 re-reads a table's whole state
        # after every commit to check its checksum's file list (a small INSERT: 1.3 s instead
        # of 0.5 s on a Europe/Berlin machine); as on UTC machines, check at checkpoints only.
        "spark.databricks.delta.allFilesInCrc.verificationMode.forceOnNonUTC.enabled": "false",
        # Python workers (UDFs, pandas) run this interpreter on the executors of a cluster on
        # this host too; a cluster of other hosts names its own in spark_conf_file.
        "spark.pyspark.python": sys.executable,
    }
    conf.update(settings.conf)
    return conf


# What the launch prints for each cause, in the words of the program that says it: the shell or
# Spark's scripts for a missing Java, Ivy (Spark's resolver) for a jar it could not resolve or
# download, and, among Ivy's lines, the JVM's network errors for a repository it could not reach.
_NO_JAVA = re.compile(
    r"JAVA_HOME is not set|java: (command )?not found|/java: No such file or directory"
    r"|Cannot run program \"java\""
)
_UNRESOLVED = re.compile(
    r"::\s+UNRESOLVED DEPENDENCIES\s+::|unresolved dependency: |::\s+FAILED DOWNLOADS\s+::"
)
_UNREACHABLE = re.compile(
    r"Server access error at url (\S+).*?\((java\.net\.\w+Exception|"
    r"javax\.net\.ssl\.\w+Exception)[^)]*\)"
)


def explain_launch_failure(launch_log: str, log_path: Path | str) -> str:
    """Turn the JVM's launch output into one actionable sentence (pure, for unit tests)."""
    if _NO_JAVA.search(launch_log):
        return f"Spark could not start Java: install a JDK 17 or set JAVA_HOME. Log: {log_path}"
    if _UNRESOLVED.search(launch_log):
        coordinates = " and ".join(delta_coordinates())
        unreachable = _UNREACHABLE.search(launch_log)
        why = (
            f"the repository could not be reached ({unreachable.group(2)} at "
            f"{unreachable.group(1)}): check the network or proxy, or "
            if unreachable
            else ""
        )
        return (
            f"The Delta Lake jars {coordinates} could not be resolved: {why}provide them "
            "through the local Maven repository (~/.m2/repository), a Maven mirror (Spark "
            "setting spark.jars.repositories=<url>[,<url>]) or an Ivy settings file "
            f"(spark.jars.ivySettings=<file>). Resolver output: {log_path}"
        )
    last_line = next(
        (line for line in reversed(launch_log.splitlines()) if line.strip()), "no output"
    )
    return f"Spark could not start ({last_line.strip()}). Log: {log_path}"


def check_class_path(conf: Mapping[str, str]) -> None:
    """Every entry of spark.driver.extraClassPath (where a metastore's JDBC driver goes) exists:
    the JVM ignores a missing one, and the metastore then fails with a far vaguer error."""
    for entry in filter(None, conf.get("spark.driver.extraClassPath", "").split(os.pathsep)):
        if not glob.glob(entry):
            raise MetastoreUnavailable(
                f"spark.driver.extraClassPath names {entry}, which does not exist: the "
                f"metastore database {redact_jdbc_url(conf[METASTORE_URL])} needs its JDBC "
                "driver's jar there. Install the driver or fix the path."
            )


def check_metastore(jvm, conf: Mapping[str, str]) -> None:
    """Connect once to the metastore database before Spark does: one clear message for a
    missing driver, an unreachable database, refused credentials or a missing Hive schema,
    instead of a stack of Hive exceptions at the first statement."""
    url = conf[METASTORE_URL]
    shown = redact_jdbc_url(url)
    properties = jvm.java.util.Properties()
    for key, name in ((METASTORE_USER, "user"), (METASTORE_PASSWORD, "password")):
        if conf.get(key):
            properties.setProperty(name, conf[key])
    jvm.java.sql.DriverManager.setLoginTimeout(METASTORE_LOGIN_TIMEOUT)
    try:
        connection = jvm.java.sql.DriverManager.getConnection(url, properties)
    except Exception as exc:
        reason = _java_message(exc)
        if "No suitable driver" in reason:
            raise MetastoreUnavailable(
                f"No JDBC driver on the driver's class path accepts the metastore URL {shown} "
                f"({METASTORE_URL}): add the driver's jar to spark.driver.extraClassPath."
            ) from None
        user = conf.get(METASTORE_USER) or "(none)"
        raise MetastoreUnavailable(
            f"The metastore database {shown} cannot be reached as user {user}: {reason}. "
            f"Check that it runs and the URL, user and password ({METASTORE_URL}, "
            f"{METASTORE_USER}, {METASTORE_PASSWORD})."
        ) from None
    try:
        metadata = connection.getMetaData()
        found = False
        for name in ("VERSION", "version"):
            tables = metadata.getTables(None, None, name, None)
            found = found or tables.next()
            tables.close()
    finally:
        connection.close()
    if not found:
        raise MetastoreUnavailable(
            f"The metastore database {shown} holds no Hive metastore schema (no VERSION "
            "table): initialise it once, from one process, before Spark processes connect."
        )


def _java_message(exc: Exception) -> str:
    """The Java exception's own message (py4j wraps it in a long text with a stack trace)."""
    java = getattr(exc, "java_exception", None)
    message = java.getMessage() if java is not None else str(exc)
    return (message or type(exc).__name__).splitlines()[0].rstrip(".")


def active_session() -> SparkSession | None:
    from pyspark.sql import SparkSession

    return SparkSession.getActiveSession() or SparkSession._instantiatedSession


def get_or_create_session(settings: SessionSettings | None = None) -> SparkSession:
    """Return this process's SparkSession, starting the JVM with Delta on first use.

    The JVM's stdout/stderr (Ivy resolution, log4j, Derby) go to a log file under the
    session home, so dbt's output stays readable.
    """
    with _session_lock:
        session = active_session()
        if session is not None:
            return session
        return _launch(settings or SessionSettings.from_profile({}))


def _launch(settings: SessionSettings) -> SparkSession:
    from pyspark import SparkConf, SparkContext
    from pyspark.java_gateway import launch_gateway
    from pyspark.sql import SparkSession

    settings.log_dir.mkdir(parents=True, exist_ok=True)
    settings.tmp_dir.mkdir(parents=True, exist_ok=True)
    values = spark_conf(settings)
    metastore_url = external_metastore_url(values)
    if metastore_url:
        check_class_path(values)
    else:
        check_embedded_metastore_free(settings.metastore_dir)
    conf = SparkConf(loadDefaults=False).setAll(list(values.items()))
    log_path = settings.launch_log
    start = log_path.stat().st_size if log_path.exists() else 0
    with one_resolution_at_a_time(), open(log_path, "ab") as log, _fork_safe_jvm_start():
        try:
            gateway = launch_gateway(
                command_line_conf(values), popen_kwargs={"stdout": log, "stderr": log}
            )
        except Exception as exc:
            launch_output = log_path.read_bytes()[start:].decode("utf-8", "replace")
            raise DeltaRuntimeUnavailable(explain_launch_failure(launch_output, log_path)) from exc
    if metastore_url:
        try:
            check_metastore(gateway.jvm, values)
        except MetastoreUnavailable:
            gateway.shutdown()
            gateway.proc.kill()
            gateway.proc.wait()
            raise
    SparkContext(conf=conf, gateway=gateway)
    # PySpark logs every failed statement with its JVM stack trace; the caller (dbt) already
    # reports the error, so keep the terminal readable.
    logging.getLogger("SQLQueryContextLogger").setLevel(logging.CRITICAL)
    session = SparkSession.builder.enableHiveSupport().getOrCreate()
    if not metastore_url:
        try:
            check_home_not_copied(
                session.catalog.getDatabase("default").locationUri,
                settings.warehouse_dir,
                settings.metastore_dir,
            )
        except SessionHomeMismatch:
            session.stop()
            raise
    return session


def _location(uri: str) -> str:
    """A local path or URI in one spelling: file:/a, file:///a/ and /a are the same."""
    path = re.sub(r"^file:(//)?", "", uri)
    return os.path.normpath(path) if path.startswith("/") else uri.rstrip("/")


def check_home_not_copied(default_location: str, warehouse_dir: str, metastore_dir: Path) -> None:
    """The embedded metastore records absolute table locations, and its default database the
    warehouse it was created with. A session home copied (`cp -a`) or moved keeps them, so a
    session on the copy would read and write the original's tables: refuse to start."""
    if _location(default_location) == _location(warehouse_dir):
        return
    raise SessionHomeMismatch(
        f"The metastore in {metastore_dir} keeps its tables under {default_location}, but this "
        f"session's warehouse is {warehouse_dir}: the session home was copied or moved (or its "
        f"warehouse setting changed), and a session on it would read and write the tables "
        f"under {default_location}. Nothing was read or written. Use the session home that "
        f"holds those tables, or start from an empty session home and rebuild there."
    )


def session_connection_handle(server_side_parameters: Mapping[str, str]) -> Any:
    """dbt-spark's `session` connection handle, whose results show TIMESTAMPs in the session's
    time zone (timestamps.py), not in PySpark's local one."""
    from dbt.adapters.spark.session import Connection, Cursor, SessionConnectionWrapper

    from dbt.adapters.sparkdelta.timestamps import as_session_shows

    class SessionCursor(Cursor):
        def fetchall(self) -> list | None:
            if self._rows is None and self._df is not None:
                self._rows = as_session_shows(self._df, self._df.collect())
            return self._rows

        def fetchone(self) -> Any:
            if self._rows is None and self._df is not None:
                self._rows = as_session_shows(self._df, self._df.take(1))
            return super().fetchone()

    class SessionConnection(Connection):
        def cursor(self) -> Cursor:
            return SessionCursor(server_side_parameters=self.server_side_parameters)

    return SessionConnectionWrapper(
        SessionConnection(server_side_parameters=dict(server_side_parameters))
    )
