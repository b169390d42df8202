"""The profile of `type: sparkdelta`: dbt-spark's credentials plus the embedded session's
settings, Spark Connect and the Delta conflict retries."""

from __future__ import annotations

import os
from dataclasses import dataclass

from dbt.adapters.spark.connections import SparkConnectionMethod, SparkCredentials
from dbt_common.dataclass_schema import StrEnum
from dbt_common.exceptions import DbtRuntimeError

from dbt.adapters.sparkdelta import spark_connect


class SparkDeltaConnectionMethod(StrEnum):
    """dbt-spark's methods plus `connect` (SQL through Spark Connect). Members compare equal
    to dbt-spark's (both are str), so dbt-spark's checks of `method` keep working."""

    THRIFT = "thrift"
    HTTP = "http"
    ODBC = "odbc"
    SESSION = "session"
    CONNECT = "connect"


# What `dbt debug` shows per method: the fields that mean something there (dbt-spark shows the
# same Thrift/ODBC fields for every method, `host: localhost, port: 443` on the embedded one).
CONNECTION_KEYS = {
    SparkDeltaConnectionMethod.SESSION: (
        "schema", "session_home", "warehouse_dir", "spark_conf_file", "python_submission_method"
    ),
    SparkDeltaConnectionMethod.THRIFT: (
        "host", "port", "schema", "auth", "user", "use_ssl", "socket_timeout", "spark_connect_url"
    ),
    SparkDeltaConnectionMethod.HTTP: (
        "host", "port", "cluster", "endpoint", "organization", "schema"
    ),
    SparkDeltaConnectionMethod.ODBC: (
        "host", "port", "cluster", "endpoint", "organization", "schema", "driver"
    ),
    SparkDeltaConnectionMethod.CONNECT: ("spark_connect_url", "schema", "use_ssl"),
}  # fmt: skip

DELTA_METADATA_ONLY_QUERIES = "spark.databricks.delta.optimizeMetadataQuery.enabled"


@dataclass
class SparkDeltaCredentials(SparkCredentials):
    # dbt validates the profile against this enum: a typo lists the valid methods.
    method: SparkDeltaConnectionMethod = None  # type: ignore[assignment]
    # Spark Connect endpoint: of the `connect` method (else sc://<host>:<port>), and of Python
    # models submitted with `spark_connect`. dbt-spark's `token` is its bearer token (only
    # ever from the environment) and `use_ssl` asks for TLS.
    spark_connect_url: str | None = None
    # Default submission method of Python models (`session` or `spark_connect`); when unset,
    # `session` for the session method and `spark_connect` for every remote method.
    python_submission_method: str | None = None
    # Seconds one Thrift call may block (connect, handshake, each poll); None: forever. A
    # stopped or hung endpoint then fails the run instead of hanging it.
    socket_timeout: int | None = None
    # Seconds the client sleeps between status polls of a Thrift statement still running
    # (dbt-spark: 5). Spark's Thrift server already holds each poll up to 5 s until the
    # statement ends, so a longer sleep only adds latency: with 5, a 5.5 s statement took 10 s.
    poll_interval: int = 1
    # The embedded session (method `session`): where its metastore, warehouse and logs live
    # (relative to the project directory; default .sparkdelta) and the JVM's log level. Spark
    # settings go in dbt-spark's `server_side_parameters`.
    session_home: str | None = None
    spark_log_level: str | None = None
    # Where managed tables live when not under session_home: a path or a URI (s3a://...).
    warehouse_dir: str | None = None
    # A spark-defaults.conf style file of Spark settings that override all others.
    spark_conf_file: str | None = None
    # Attempts in all (default 6) of a Delta write that lost a conflict it is retried on: a
    # whole-table replace (CREATE OR REPLACE TABLE, INSERT OVERWRITE) on every conflict;
    # MERGE, INSERT INTO and OPTIMIZE on data conflicts only (retry.py).
    conflict_retries: int | None = None

    def __post_init__(self) -> None:
        if self.method == SparkConnectionMethod.SESSION and self.host is None:
            self.host = "localhost"  # dbt-spark insists on a host even in-process
        if self.method == SparkDeltaConnectionMethod.CONNECT:
            if not self.spark_connect_url and not self.host:
                raise DbtRuntimeError(
                    "The connect method needs `spark_connect_url: sc://host:15002` (or `host` "
                    "and `port`) in the profile."
                )
            if self.spark_connect_url:
                try:
                    self.host = spark_connect.url_host(self.spark_connect_url)
                except spark_connect.ConnectUrlError as exc:
                    raise DbtRuntimeError(str(exc)) from None
            else:
                self.spark_connect_url = f"sc://{self.host}:{self.port}"
        # An unset environment variable renders as ''; PyHive refuses any password, even an
        # empty one, outside LDAP and CUSTOM auth.
        self.token = self.token or None
        self.password = self.password or None
        super().__post_init__()
        if self.method != SparkConnectionMethod.SESSION:
            # Spark's Thrift server and Spark Connect turn on the java.time API in their
            # sessions, where Delta 4.0.1's metadata-only MIN/MAX of a date or timestamp column
            # (e.g. an incremental filter's `max(updated_at)`) fails with a ClassCastException.
            self.server_side_parameters.setdefault(DELTA_METADATA_ONLY_QUERIES, "false")

    def connect_url(self) -> str | None:
        """The Spark Connect URL with the token: of the connect method, or of Python models
        (`spark_connect_url`, else SPARK_REMOTE). Secret: show `redact(url)` only."""
        url = self.spark_connect_url or os.environ.get("SPARK_REMOTE")
        if not url:
            return None
        tls = self.use_ssl and self.method == SparkDeltaConnectionMethod.CONNECT
        return spark_connect.with_token(url, self.token, use_ssl=tls)

    @property
    def type(self) -> str:
        return "sparkdelta"

    def _connection_keys(self) -> tuple[str, ...]:
        return ("method", *CONNECTION_KEYS[self.method])
