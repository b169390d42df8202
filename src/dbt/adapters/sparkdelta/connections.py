"""Credentials and connections: dbt-spark's, with the embedded Delta session started by us."""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from dbt.adapters.contracts.connection import Connection
from dbt.adapters.events.logging import AdapterLogger
from dbt.adapters.exceptions import FailedToConnectError
from dbt.adapters.spark.connections import (
    SparkConnectionManager,
    SparkConnectionMethod,
    SparkCredentials,
)
from dbt_common.exceptions import DbtRuntimeError

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


def without_jvm_stack(message: str) -> str:
    """A Spark error as the user needs it: the message, without py4j's preamble and the JVM
    stack trace (dbt-spark passes both through; the full error stays in dbt's debug log)."""
    lines = []
    for line in message.strip().splitlines():
        if re.match(r"\s*(at [\w$.<>]+\(|\.\.\. \d+ more)", line):
            break
        lines.append(line)
    text = "\n".join(lines).strip()
    text = re.sub(r"^An error occurred while calling o\d+\.\w+\.\s*:?\s*", "", text)
    return re.sub(r"^(?:[\w$]+\.)+[\w$]*(?:Exception|Error): ", "", text).strip() or message


class SparkDeltaConnectionManager(SparkConnectionManager):
    TYPE = "sparkdelta"

    @contextmanager
    def exception_handler(self, sql: str) -> Iterator[None]:
        try:
            with super().exception_handler(sql):
                yield
        except DbtRuntimeError as exc:
            raise DbtRuntimeError(without_jvm_stack(exc.msg)) from exc

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
