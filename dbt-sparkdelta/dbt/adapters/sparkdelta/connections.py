"""Connections: dbt-spark's, with the embedded Delta session started here, SQL over Spark Connect
(method `connect`), a timeout on Thrift sockets, and Delta's write conflicts retried or
explained (retry.py). The profile is credentials.py; error texts are errors.py."""

from __future__ import annotations

import re
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from dbt.adapters.contracts.connection import Connection, ConnectionState
from dbt.adapters.events.logging import AdapterLogger
from dbt.adapters.exceptions import FailedToConnectError
from dbt.adapters.spark.connections import (
    SparkConnectionManager,
    SparkConnectionMethod,
)
from dbt_common.exceptions import DbtRuntimeError

from dbt.adapters.sparkdelta import spark_connect
from dbt.adapters.sparkdelta.credentials import (
    SparkDeltaConnectionMethod,
)
from dbt.adapters.sparkdelta.errors import (
    LOST_ERROR_CLASS,
    connect_error_message,
    jvm_error_message,
    lost_connection,
    open_error_message,
    without_jvm_stack,
)
from dbt.adapters.sparkdelta.python_submissions import API_MODES
from dbt.adapters.sparkdelta.retry import (
    DeltaConflictError,
    RetryPolicy,
    classify,
    conflict_message,
    describe_statement,
    retried_on,
    run_with_retry,
)

logger = AdapterLogger("SparkDelta")


class ConnectOpenError(FailedToConnectError):
    """A Spark Connect session could not be opened (the message says why and what to do)."""


_socket_patch = threading.Lock()


@contextmanager
def thrift_socket_timeout(seconds: int) -> Iterator[None]:
    """PyHive opens its Thrift socket without a timeout; give the sockets it opens here one."""
    import thrift.transport.TSocket as tsocket

    original = tsocket.TSocket

    class TimeoutSocket(original):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self.setTimeout(seconds * 1000)

    with _socket_patch:
        tsocket.TSocket = TimeoutSocket
        try:
            yield
        finally:
            tsocket.TSocket = original


class SparkDeltaConnectionManager(SparkConnectionManager):
    TYPE = "sparkdelta"

    def execute(
        self, sql: str, auto_begin: bool = False, fetch: bool = False, limit: int | None = None
    ) -> tuple[Any, Any]:
        """dbt-spark's execute with Delta's concurrency conflicts handled: retried (bounded
        exponential backoff with jitter, each retry logged) as retry.py says which statements
        are (whole-table replaces on every conflict; MERGE, INSERT INTO and OPTIMIZE on data
        conflicts); a clear error naming table, node and conflicting operation otherwise."""
        verb, table = describe_statement(sql)
        connection = self.get_if_exists()
        node = connection.name if connection is not None else None
        what = f"{(verb or 'statement').upper()}" + (f" of {node}" if node else "")
        parent = super().execute
        embedded = getattr(getattr(connection, "credentials", None), "method", None) == (
            SparkConnectionMethod.SESSION
        )

        def run() -> tuple[Any, Any]:
            if not embedded:
                return parent(sql, auto_begin=auto_begin, fetch=fetch, limit=limit)
            # The embedded session's builder fails while a Spark Connect Python model of this
            # process runs (PySpark's API mode is per process): wait for it (API_MODES).
            with API_MODES.using("classic"):
                return parent(sql, auto_begin=auto_begin, fetch=fetch, limit=limit)

        def log_retry(attempt: int, conflict: Any, wait: float) -> None:
            logger.warning(
                f"Delta conflict on {table}: {what} hit {conflict.exception} (concurrent "
                f"{conflict.operation or 'commit'}); retry {attempt} in {wait:.2f}s"
            )

        retry_on = retried_on(verb)
        try:
            if retry_on:
                result = run_with_retry(
                    run,
                    table,
                    what,
                    policy=self._retry_policy(connection),
                    on_retry=log_retry,
                    retry_on=retry_on,
                )
            else:
                result = run()
        except DeltaConflictError as exc:
            raise DbtRuntimeError(str(exc)) from exc
        except DbtRuntimeError as exc:
            conflict = classify(exc.msg, retry_on)
            if conflict is not None:
                raise DbtRuntimeError(conflict_message(conflict, table or "?", what)) from exc
            columns = self._columns_of_cast_target(exc.msg, table, parent)
            if columns:
                raise DbtRuntimeError(f"{exc.msg}\n{columns}") from exc
            raise
        return result

    @staticmethod
    def _retry_policy(connection: Connection | None) -> RetryPolicy:
        attempts = getattr(getattr(connection, "credentials", None), "conflict_retries", None)
        return RetryPolicy(attempts=attempts) if attempts else RetryPolicy()

    @staticmethod
    def _columns_of_cast_target(message: str, table: str | None, execute: Any) -> str | None:
        """For a value that cannot be cast to a column's type during a write, the columns of
        the target with that type (Spark's message names the value and type, not the column)."""
        found = re.search(r'CAST_INVALID_INPUT\].*?cannot be cast to "([^"]+)"', message, re.S)
        if not found or not table:
            return None
        try:
            _, described = execute(f"describe table {table}", fetch=True)
        except Exception:  # the original error is what matters
            return None
        wanted = found.group(1).lower()
        columns = []
        for row in described.rows:
            name, data_type = row[0], str(row[1] or "")
            if not name or name.startswith("#"):
                break  # partitioning and detail sections follow the columns
            if data_type.lower() == wanted:
                columns.append(name)
        if not columns:
            return None
        return f"Target {table}: the value is for its {wanted} column(s) {', '.join(columns)}."

    @contextmanager
    def exception_handler(self, sql: str) -> Iterator[None]:
        try:
            with super().exception_handler(sql):
                yield
        except DbtRuntimeError as exc:
            # dbt opens a connection lazily, inside this handler, and dbt-spark's handler turns
            # every error into a plain runtime error: open()'s own message is the one to show.
            opening = exc if isinstance(exc, ConnectOpenError) else exc.__context__
            if isinstance(opening, ConnectOpenError):
                raise ConnectOpenError(opening.msg) from None
            recovered = jvm_error_message(exc) if LOST_ERROR_CLASS in exc.msg else None
            message = without_jvm_stack(recovered or exc.msg)
            connection = self.get_if_exists()
            credentials = connection.credentials if connection is not None else None
            if credentials is not None and credentials.method == SparkDeltaConnectionMethod.CONNECT:
                url = spark_connect.redact(credentials.connect_url() or "")
                message = connect_error_message(message, url, bool(credentials.token))
            elif credentials is not None and credentials.method != SparkConnectionMethod.SESSION:
                if lost_connection(message):
                    message = (
                        f"Lost the connection to the Spark Thrift endpoint {credentials.host}:"
                        f"{credentials.port} (stopped, restarted or not answering within "
                        f"socket_timeout={credentials.socket_timeout}s); the statement may not "
                        f"have run. Check that the endpoint is up and rerun. "
                        f"Cause: {message}"
                    )
            raise DbtRuntimeError(message) from exc

    @classmethod
    def open(cls, connection: Connection) -> Connection:
        if connection.state == "open":
            return connection
        credentials = connection.credentials
        if credentials.method == SparkDeltaConnectionMethod.CONNECT:
            return cls._open_connect(connection)
        if credentials.method == SparkConnectionMethod.THRIFT:
            connection = cls._open_thrift(connection)
            # Spark's Thrift server ignores the settings PyHive sends when the session opens
            # (dbt-spark's way): SET them in the session.
            cursor = connection.handle.cursor()
            for key, value in credentials.server_side_parameters.items():
                cursor.execute(f"SET {key}={value}")
            return connection
        if credentials.method == SparkConnectionMethod.SESSION:
            # Start (once per process) the SparkSession with Delta, the metastore and the
            # tuning; dbt-spark's session cursor then finds it with getOrCreate().
            from dbt.flags import get_flags

            from dbt.adapters.sparkdelta.session import (
                DeltaRuntimeUnavailable,
                SessionHomeMismatch,
                SessionSettings,
                get_or_create_session,
                session_connection_handle,
            )

            try:
                settings = SessionSettings.from_profile(
                    {
                        "session_home": credentials.session_home,
                        "spark_log_level": credentials.spark_log_level,
                        "server_side_parameters": credentials.server_side_parameters,
                        "warehouse_dir": credentials.warehouse_dir,
                        "spark_conf_file": credentials.spark_conf_file,
                    },
                    getattr(get_flags(), "PROJECT_DIR", None),
                )
                with API_MODES.using("classic"):  # PySpark's builder is classic's only then
                    get_or_create_session(settings)
            except (DeltaRuntimeUnavailable, SessionHomeMismatch) as exc:
                raise FailedToConnectError(str(exc)) from None
            connection = super().open(connection)
            # dbt-spark's handle, with results' TIMESTAMPs in the session's time zone
            connection.handle = session_connection_handle(credentials.server_side_parameters)
            return connection
        return super().open(connection)

    @classmethod
    def _open_thrift(cls, connection: Connection) -> Connection:
        credentials = connection.credentials
        if not credentials.socket_timeout:
            return super().open(connection)
        with thrift_socket_timeout(credentials.socket_timeout):
            try:
                return super().open(connection)
            except FailedToConnectError as exc:
                raise FailedToConnectError(
                    f"Could not connect to the Spark Thrift endpoint {credentials.host}:"
                    f"{credentials.port} within socket_timeout={credentials.socket_timeout}s"
                    f" (is it running, and are host and port right?): {exc.msg}"
                ) from None

    @classmethod
    def _open_connect(cls, connection: Connection) -> Connection:
        """A Spark Connect session of its own for this dbt connection (dbt-spark has no such
        method: its open() would refuse it)."""
        credentials = connection.credentials
        url = credentials.connect_url()
        shown = spark_connect.redact(url)
        try:
            session = spark_connect.open_session(
                url, credentials.connect_timeout, credentials.server_side_parameters
            )
        except Exception as exc:
            raise ConnectOpenError(open_error_message(str(exc), credentials, url)) from None
        connection.handle = spark_connect.ConnectConnectionWrapper(session, shown)
        connection.state = ConnectionState.OPEN
        return connection
