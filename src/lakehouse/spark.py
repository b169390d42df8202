"""The one place that knows how to start Spark with Delta Lake for this project.

dbt (through the `sparkdelta` adapter), the CLI, the tests and the benchmarks all get their
SparkSession from `get_or_create_session`, so the Delta jars, the metastore, the warehouse and
the tuning are configured once. Every setting can be overridden by an environment variable.
"""

from __future__ import annotations

import logging
import os
import re
import threading
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

SCALA_BINARY_VERSION = "2.13"
_LOG4J_CONFIG = Path(__file__).with_name("log4j2.properties")
_session_lock = threading.Lock()


class DeltaRuntimeUnavailable(RuntimeError):
    """The JVM could not start with the Delta Lake jars (one short, actionable message)."""


def delta_version() -> str:
    """The Delta version of the JVM jars: always the one of the installed `delta-spark` wheel."""
    return metadata.version("delta-spark")


def delta_coordinates(version: str | None = None) -> list[str]:
    version = version or delta_version()
    return [
        f"io.delta:delta-spark_{SCALA_BINARY_VERSION}:{version}",
        f"io.delta:delta-storage:{version}",
    ]


def _env(name: str, default: str | None = None) -> str | None:
    value = os.environ.get(name)
    return value if value not in (None, "") else default


@dataclass(frozen=True)
class LakehouseSettings:
    """Where the embedded lakehouse keeps its state and how Spark is sized.

    Defaults suit a 2-core laptop or CI machine; each field has an environment variable.
    """

    home: Path
    master: str = "local[2]"
    driver_memory: str = "4g"
    shuffle_partitions: int = 4
    log_level: str = "error"
    maven_repositories: str | None = None
    ivy_settings: str | None = None
    ivy_cache: str | None = None
    extra_conf: dict[str, str] = field(default_factory=dict)

    @classmethod
    def from_env(cls, project_dir: str | os.PathLike | None = None) -> LakehouseSettings:
        project_dir = Path(project_dir or _env("DBT_PROJECT_DIR") or os.getcwd())
        return cls(
            home=Path(_env("LAKEHOUSE_HOME") or project_dir / ".lakehouse").resolve(),
            master=_env("LAKEHOUSE_SPARK_MASTER", cls.master),
            driver_memory=_env("LAKEHOUSE_DRIVER_MEMORY", cls.driver_memory),
            shuffle_partitions=int(
                _env("LAKEHOUSE_SHUFFLE_PARTITIONS", str(cls.shuffle_partitions))
            ),
            log_level=_env("LAKEHOUSE_LOG_LEVEL", cls.log_level),
            maven_repositories=_env("LAKEHOUSE_MAVEN_REPOSITORIES"),
            ivy_settings=_env("LAKEHOUSE_IVY_SETTINGS"),
            ivy_cache=_env("LAKEHOUSE_IVY_CACHE"),
        )

    @property
    def warehouse_dir(self) -> Path:
        return self.home / "warehouse"

    @property
    def metastore_dir(self) -> Path:
        return self.home / "metastore_db"

    @property
    def log_dir(self) -> Path:
        return self.home / "logs"

    @property
    def launch_log(self) -> Path:
        return self.log_dir / "spark-driver.log"


def spark_conf(settings: LakehouseSettings) -> dict[str, str]:
    """The Spark configuration of the embedded lakehouse (pure: no JVM is started)."""
    java_options = " ".join(
        [
            f"-Dlog4j2.configurationFile=file:{_LOG4J_CONFIG}",
            f"-Dlakehouse.log.level={settings.log_level}",
            f"-Dderby.system.home={settings.home}",
            f"-Dderby.stream.error.file={settings.log_dir / 'derby.log'}",
        ]
    )
    partitions = str(settings.shuffle_partitions)
    conf = {
        "spark.master": settings.master,
        "spark.app.name": "lakehouse",
        "spark.driver.memory": settings.driver_memory,
        "spark.driver.extraJavaOptions": java_options,
        # Delta Lake, resolved by Maven coordinates (local ~/.m2, a mirror, or Ivy settings).
        "spark.jars.packages": ",".join(delta_coordinates()),
        "spark.sql.extensions": "io.delta.sql.DeltaSparkSessionExtension",
        "spark.sql.catalog.spark_catalog": "org.apache.spark.sql.delta.catalog.DeltaCatalog",
        # A persistent Hive metastore (embedded Derby) and warehouse, so tables survive runs.
        "spark.sql.catalogImplementation": "hive",
        "spark.sql.warehouse.dir": str(settings.warehouse_dir),
        "spark.hadoop.javax.jdo.option.ConnectionURL": (
            f"jdbc:derby:;databaseName={settings.metastore_dir};create=true"
        ),
        # Small machine: few partitions, no UI, no progress bar.
        "spark.sql.shuffle.partitions": str(settings.shuffle_partitions),
        "spark.default.parallelism": str(settings.shuffle_partitions),
        "spark.databricks.delta.snapshotPartitions": str(settings.shuffle_partitions),
        # VACUUM lists the table directory with this many tasks (default 10000: minutes here).
        "spark.sql.sources.parallelPartitionDiscovery.parallelism": partitions,
        "spark.ui.enabled": "false",
        "spark.ui.showConsoleProgress": "false",
        "spark.sql.session.timeZone": "UTC",
    }
    optional = {
        "spark.jars.repositories": settings.maven_repositories,
        "spark.jars.ivySettings": settings.ivy_settings,
        "spark.jars.ivy": settings.ivy_cache,
    }
    conf.update({key: value for key, value in optional.items() if value})
    conf.update(settings.extra_conf)
    return conf


def explain_launch_failure(launch_log: str, log_path: Path | str) -> str:
    """Turn the JVM's launch output into one actionable sentence (pure, for unit tests)."""
    coordinates = " and ".join(delta_coordinates())
    if re.search(r"unresolved dependency|not found|Error downloading", launch_log):
        return (
            f"The Delta Lake jars {coordinates} could not be resolved. Provide them through the "
            "local Maven repository (~/.m2/repository), a Maven mirror "
            "(LAKEHOUSE_MAVEN_REPOSITORIES=<url>[,<url>]) or Ivy settings "
            f"(LAKEHOUSE_IVY_SETTINGS=<file>). Resolver output: {log_path}"
        )
    if re.search(r"JAVA_HOME|java: (command )?not found|No such file or directory", launch_log):
        return f"Spark could not start Java: install a JDK 17 or set JAVA_HOME. Log: {log_path}"
    last_line = next(
        (line for line in reversed(launch_log.splitlines()) if line.strip()), "no output"
    )
    return f"Spark could not start ({last_line.strip()}). Log: {log_path}"


def active_session() -> SparkSession | None:
    from pyspark.sql import SparkSession

    return SparkSession.getActiveSession() or SparkSession._instantiatedSession


def get_or_create_session(
    settings: LakehouseSettings | None = None, extra_conf: dict[str, str] | None = None
) -> SparkSession:
    """Return this process's SparkSession, starting the JVM with Delta on first use.

    The JVM's stdout/stderr (Ivy resolution, log4j, Derby) go to a log file under the
    lakehouse home, so dbt's output stays readable.
    """
    with _session_lock:
        session = active_session()
        if session is not None:
            return session
        settings = settings or LakehouseSettings.from_env()
        if extra_conf:
            settings = LakehouseSettings(
                **{**settings.__dict__, "extra_conf": {**settings.extra_conf, **extra_conf}}
            )
        return _launch(settings)


def _launch(settings: LakehouseSettings) -> SparkSession:
    from pyspark import SparkConf, SparkContext
    from pyspark.java_gateway import launch_gateway
    from pyspark.sql import SparkSession

    settings.log_dir.mkdir(parents=True, exist_ok=True)
    conf = SparkConf(loadDefaults=False).setAll(list(spark_conf(settings).items()))
    log_path = settings.launch_log
    start = log_path.stat().st_size if log_path.exists() else 0
    with open(log_path, "ab") as log:
        try:
            gateway = launch_gateway(conf, popen_kwargs={"stdout": log, "stderr": log})
        except Exception as exc:
            launch_output = log_path.read_bytes()[start:].decode("utf-8", "replace")
            raise DeltaRuntimeUnavailable(explain_launch_failure(launch_output, log_path)) from exc
    SparkContext(conf=conf, gateway=gateway)
    # PySpark logs every failed statement with its JVM stack trace; the caller (dbt) already
    # reports the error, so keep the terminal readable.
    logging.getLogger("SQLQueryContextLogger").setLevel(logging.CRITICAL)
    return SparkSession.builder.enableHiveSupport().getOrCreate()
