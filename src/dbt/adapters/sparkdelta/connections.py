"""Credentials and connections: dbt-spark's, with the embedded Delta session started by us."""

from __future__ import annotations

from dataclasses import dataclass

from dbt.adapters.contracts.connection import Connection
from dbt.adapters.events.logging import AdapterLogger
from dbt.adapters.exceptions import FailedToConnectError
from dbt.adapters.spark.connections import (
    SparkConnectionManager,
    SparkConnectionMethod,
    SparkCredentials,
)

logger = AdapterLogger("SparkDelta")


@dataclass
class SparkDeltaCredentials(SparkCredentials):
    # Spark Connect endpoint for Python models submitted with `spark_connect`.
    spark_connect_url: str | None = None
    # Default submission method of Python models (`session` or `spark_connect`); when unset,
    # `session` for the session method and `spark_connect` for every remote method.
    python_submission_method: str | None = None

    def __post_init__(self) -> None:
        if self.method == SparkConnectionMethod.SESSION and self.host is None:
            self.host = "localhost"  # dbt-spark insists on a host even in-process
        super().__post_init__()

    @property
    def type(self) -> str:
        return "sparkdelta"


class SparkDeltaConnectionManager(SparkConnectionManager):
    TYPE = "sparkdelta"

    @classmethod
    def open(cls, connection: Connection) -> Connection:
        if connection.state == "open":
            return connection
        credentials = connection.credentials
        if credentials.method == SparkConnectionMethod.SESSION:
            # Start (once per process) the SparkSession with Delta, the metastore and the
            # tuning; dbt-spark's session cursor then finds it with getOrCreate().
            from dbt.flags import get_flags

            from lakehouse.spark import (
                DeltaRuntimeUnavailable,
                LakehouseSettings,
                get_or_create_session,
            )

            project_dir = getattr(get_flags(), "PROJECT_DIR", None)
            try:
                get_or_create_session(
                    LakehouseSettings.from_env(project_dir),
                    extra_conf=credentials.server_side_parameters,
                )
            except DeltaRuntimeUnavailable as exc:
                raise FailedToConnectError(str(exc)) from None
        return super().open(connection)
