"""Credentials and connections: dbt-spark's, with the embedded Delta session started here, SQL
over Spark Connect (method `connect`), and Delta's write conflicts retried or explained."""

from __future__ import annotations

import os
import re
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from dbt.adapters.contracts.connection import Connection, ConnectionState
from dbt.adapters.events.logging import AdapterLogger
from dbt.adapters.exceptions import FailedToConnectError
from dbt.adapters.spark.connections import (
    SparkConnectionManager,
    SparkConnectionMethod,
    SparkCredentials,
)
from dbt_common.dataclass_schema import StrEnum
from dbt_common.exceptions import DbtRuntimeError

from dbt.adapters.sparkdelta import faults, spark_connect
from dbt.adapters.sparkdelta.retry import (
    DeltaConflictError,
    RetryPolicy,
    classify,
    conflict_message,
    run_with_retry,
)

logger = AdapterLogger("SparkDelta")


class ConnectOpenError(FailedToConnectError):
    """A Spark Connect session could not be opened (the message says why and what to do)."""


class SparkDeltaConnectionMethod(StrEnum):
    """dbt-spark's methods plus `connect` (SQL through Spark Connect). Members compare equal
    to dbt-spark's (both are str), so dbt-spark's checks of `method` keep working."""

    THRIFT = "thrift"
    HTTP = "http"
    ODBC = "odbc"
    SESSION = "session"
    CONNECT = "connect"


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
    # The embedded session (method `session`): where its metastore, warehouse and logs live
    # (relative to the project directory; default .sparkdelta) and the JVM's log level. Spark
    # settings go in dbt-spark's `server_side_parameters`.
    session_home: str | None = None
    spark_log_level: str | None = None
    # Where managed tables live when not under session_home: a path or a URI (s3a://...).
    warehouse_dir: str | None = None
    # A spark-defaults.conf style file of Spark settings that override all others.
    spark_conf_file: str | None = None
    # Attempts of a Delta write that lost a data conflict (MERGE, INSERT INTO, OPTIMIZE).
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


def without_jvm_stack(message: str) -> str:
    """A Spark error as the user needs it: the message, without py4j's preamble and the JVM
    stack trace (dbt-spark passes both through; the full error stays in dbt's debug log)."""
    lines = []
    for line in message.strip().splitlines():
        # Spark Connect appends the server's stack after "JVM stacktrace:".
        if re.match(r"\s*(at [\w$.<>]+\(|\.\.\. \d+ more|JVM stacktrace:)", line):
            break
        lines.append(line)
    text = "\n".join(lines).strip()
    text = re.sub(r"^An error occurred while calling o\d+\.\w+\.\s*:?\s*", "", text)
    text = re.sub(r"^(?:[\w$]+\.)+[\w$]*(?:Exception|Error): ", "", text).strip() or message
    text = without_query_plan(text)
    # A failed write task reports only "Task failed while writing rows"; the reason (a bad
    # value, a constraint) is the innermost "Caused by:" of the JVM stack.
    causes = re.findall(r"^Caused by: (?:[\w$]+\.)+[\w$]*(?:Exception|Error): (.+)$", message, re.M)
    if causes and re.search(r"TASK_WRITE_FAILED|Job aborted|Task failed", text):
        text = f"{text}\nCaused by: {causes[-1].strip()}"
    return text


# PySpark 4.0.1 rebuilds the message of a JVM error from Spark's own list of error classes,
# which lacks Delta's (DELTA_*): building it fails, and what reaches Python is this.
LOST_ERROR_CLASS = "Cannot find main error class"


def jvm_error_message(exc: BaseException, max_depth: int = 12) -> str | None:
    """The JVM's own message of the error behind `exc` (e.g. Delta's DELTA_MERGE_UNRESOLVED_
    EXPRESSION with the column it could not resolve), when PySpark lost it.

    PySpark raises its INTERNAL_ERROR while converting the original py4j error, so the original
    is in the chain of causes and contexts of the exception dbt-spark raises: its JVM exception
    (`java_exception`, or `_origin` of an already converted one) still has the message. None
    when no exception of the chain has a usable one."""
    seen: set[int] = set()
    pending: list[BaseException | None] = [exc]
    while pending and len(seen) < max_depth:
        current = pending.pop(0)
        if current is None or id(current) in seen:
            continue
        seen.add(id(current))
        for attribute in ("java_exception", "_origin"):
            java = getattr(current, attribute, None)
            if java is None:
                continue
            try:
                message = str(java.getMessage() or "")
            except Exception:  # a dead gateway: the caller keeps PySpark's message
                continue
            if message and LOST_ERROR_CLASS not in message:
                return message
        pending += [current.__cause__, current.__context__]
    return None


def without_query_plan(message: str) -> str:
    """Spark appends the logical plan to an analysis error (";\n'Project [...]\n+- ..."):
    dozens of lines that bury the one that names the missing column or table."""
    found = re.search(r";\n'?[A-Z]\w*(?: \[|\s|$)", message)
    return message[: found.start()].rstrip() if found else message


def lost_connection(message: str) -> bool:
    return bool(
        re.search(
            r"TTransportException|Connection lost|Connection refused|Connection reset|"
            r"Broken pipe|timed out|TSocket read 0 bytes|Could not connect",
            message,
            re.I,
        )
    )


# gRPC's words for an endpoint that is gone, and Spark Connect's for a server session that no
# longer exists because the endpoint restarted.
_CONNECT_LOST = re.compile(
    r"StatusCode\.UNAVAILABLE|failed to connect to all addresses|Socket closed|RETRIES_EXCEEDED|"
    r"INVALID_HANDLE\.SESSION_(?:CHANGED|NOT_FOUND|CLOSED)",
    re.I,
)


def connect_error_message(message: str, url: str, token_set: bool) -> str:
    """A Spark Connect failure as the user needs it: refused for its token, or a lost endpoint
    (naming the URL and what to do); other errors unchanged."""
    if re.search(r"UNAUTHENTICATED|authentication token", message, re.I):
        given = "an invalid" if token_set else "no"
        return (
            f"The Spark Connect endpoint {url} refused the client: it sent {given} token "
            f"({_first_line(message)}). Set the profile's `token` (the project's profile reads "
            "it from LAKEHOUSE_CONNECT_TOKEN) to the endpoint's spark.connect.authenticate.token."
        )
    if _CONNECT_LOST.search(message) or lost_connection(message):
        return (
            f"Lost the connection to the Spark Connect endpoint {url} (stopped, restarted or "
            "not reachable); the statement may not have run, and the endpoint's session state "
            "(temporary views, settings) is gone. Check it with `lakehouse endpoint status` "
            f"and rerun. Cause: {_first_line(message)}"
        )
    return message


def open_error_message(message: str, credentials: Any, url: str) -> str:
    """Why a Spark Connect session could not be opened, and what to do."""
    shown = spark_connect.redact(url)
    explained = connect_error_message(message, shown, bool(credentials.token))
    if explained.startswith("The Spark Connect endpoint"):  # refused for its token
        return explained
    if explained.startswith("Lost the connection"):
        text = (
            f"Could not reach the Spark Connect endpoint {shown} within "
            f"connect_timeout={credentials.connect_timeout}s: is it running (`lakehouse endpoint "
            f"status`) and is the URL right? Cause: {_first_line(message)}"
        )
        if credentials.token and spark_connect.url_host(url) != "localhost":
            text += (
                " With a token, PySpark speaks TLS to every host but `localhost`: put a TLS "
                "proxy in front of the endpoint, or use host `localhost` on its machine."
            )
        return text
    return f"Could not open a Spark Connect session on {shown}: {explained}"


def _first_line(message: str) -> str:
    details = re.search(r'details = "([^"]+)"', message)
    if details:
        return details.group(1)
    return next((line.strip() for line in message.splitlines() if line.strip()), message)


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


_LEADING_COMMENTS = re.compile(r"^\s*(?:/\*.*?\*/\s*|--[^\n]*\n\s*)*", re.S)
_STATEMENT = re.compile(
    r"(?P<verb>merge\s+(?:with\s+schema\s+evolution\s+)?into|insert\s+into(?:\s+table)?"
    r"|insert\s+overwrite(?:\s+table)?|optimize|create\s+or\s+replace\s+table"
    r"|create\s+table(?:\s+if\s+not\s+exists)?|delete\s+from|update|alter\s+table"
    r"|vacuum|restore\s+table|reorg\s+table|truncate\s+table)\s+(?P<table>[`\w.]+)",
    re.I,
)
# Statements that are safe to run again after a data conflict: Delta re-plans them against
# the new snapshot, so a retry equals running after the other writer (see retry.py).
RETRIED_VERBS = ("merge", "insert into", "optimize")


def describe_statement(sql: str) -> tuple[str | None, str | None]:
    """(verb, table) of a Delta write, e.g. ("merge into", "`s`.`t`"); (None, None) else."""
    found = _STATEMENT.match(_LEADING_COMMENTS.sub("", sql, count=1))
    if not found:
        return None, None
    verb = re.sub(r"\s+", " ", found.group("verb").lower())
    return verb, found.group("table")


def is_retried(verb: str | None) -> bool:
    return verb is not None and verb.startswith(RETRIED_VERBS)


class SparkDeltaConnectionManager(SparkConnectionManager):
    TYPE = "sparkdelta"

    def execute(
        self, sql: str, auto_begin: bool = False, fetch: bool = False, limit: int | None = None
    ) -> tuple[Any, Any]:
        """dbt-spark's execute with Delta's concurrency conflicts handled: retried (bounded
        exponential backoff with jitter, each retry logged) for MERGE, INSERT INTO and
        OPTIMIZE; a clear error naming table, node and conflicting operation otherwise."""
        verb, table = describe_statement(sql)
        connection = self.get_if_exists()
        node = connection.name if connection is not None else None
        what = f"{(verb or 'statement').upper()}" + (f" of {node}" if node else "")
        parent = super().execute
        faults.before_statement(node, verb)

        def run() -> tuple[Any, Any]:
            with faults.during_statement(node, verb):
                return parent(sql, auto_begin=auto_begin, fetch=fetch, limit=limit)

        def log_retry(attempt: int, conflict: Any, wait: float) -> None:
            logger.warning(
                f"Delta conflict on {table}: {what} hit {conflict.exception} (concurrent "
                f"{conflict.operation or 'commit'}); retry {attempt} in {wait:.2f}s"
            )

        try:
            if is_retried(verb):
                result = run_with_retry(
                    run, table, what, policy=self._retry_policy(connection), on_retry=log_retry
                )
            else:
                result = run()
        except DeltaConflictError as exc:
            raise DbtRuntimeError(str(exc)) from exc
        except DbtRuntimeError as exc:
            conflict = classify(exc.msg)
            if conflict is not None:
                raise DbtRuntimeError(conflict_message(conflict, table or "?", what)) from exc
            columns = self._columns_of_cast_target(exc.msg, table, parent)
            if columns:
                raise DbtRuntimeError(f"{exc.msg}\n{columns}") from exc
            raise
        faults.after_statement(node, verb)
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
                        f"have run. Check it with `lakehouse endpoint status` and rerun. "
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
                get_or_create_session(settings)
            except (DeltaRuntimeUnavailable, SessionHomeMismatch) as exc:
                raise FailedToConnectError(str(exc)) from None
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
                    f" (is it running? `lakehouse endpoint status`): {exc.msg}"
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
