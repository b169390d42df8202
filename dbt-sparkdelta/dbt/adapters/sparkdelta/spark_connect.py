"""The `connect` method: dbt's SQL through a Spark Connect endpoint (pyspark.sql.connect).

One Spark Connect session per dbt connection (so per dbt thread): its SQL settings, temporary
views and current schema are its own, as a Thrift session's are. The wrapper gives dbt-spark
the cursor it expects (execute, description, fetchall), as dbt-spark's `session` cursor does
for an in-process SparkSession.
"""

from __future__ import annotations

import atexit
import datetime
import decimal
import weakref
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlparse

from dbt.adapters.events.logging import AdapterLogger
from dbt.adapters.spark.connections import SparkConnectionWrapper

from dbt.adapters.sparkdelta.timestamps import as_session_shows

logger = AdapterLogger("SparkDelta")

URL_SCHEME = "sc://"


class ConnectUrlError(ValueError):
    """A Spark Connect URL that cannot be used (the message names the setting)."""


def split_url(url: str) -> tuple[str, dict[str, str]]:
    """("sc://host:port", {param: value}) of a Spark Connect URL `sc://host:port/;k=v;k=v`."""
    if not url.startswith(URL_SCHEME):
        raise ConnectUrlError(
            f"spark_connect_url {redact(url)!r} is not a Spark Connect URL: it must look like "
            "sc://host:15002 (parameters after '/;', e.g. sc://host:15002/;use_ssl=true)."
        )
    base, _, tail = url.partition("/;") if "/;" in url else (url.rstrip("/"), "", "")
    params = {}
    for item in filter(None, tail.split(";")):
        key, sep, value = item.partition("=")
        if not sep:
            raise ConnectUrlError(f"spark_connect_url parameter {key!r} has no '=value'.")
        params[key] = value
    return base.rstrip("/"), params


def build_url(base: str, params: dict[str, str]) -> str:
    tail = ";".join(f"{key}={value}" for key, value in params.items())
    return f"{base}/;{tail}" if tail else base


def with_token(url: str, token: str | None, use_ssl: bool = False) -> str:
    """`url` with the bearer token (and use_ssl) as Spark Connect URL parameters, unless the
    URL already carries them."""
    base, params = split_url(url)
    if use_ssl:
        params.setdefault("use_ssl", "true")
    if token:
        params.setdefault("token", token)
    return build_url(base, params)


def redact(url: str) -> str:
    """The URL as it may be shown: its token replaced (it is a secret)."""
    if ";token=" not in url:
        return url
    head, _, rest = url.partition(";token=")
    _, sep, after = rest.partition(";")
    return f"{head};token=***{sep}{after}"


def url_host(url: str) -> str:
    base, _ = split_url(url)
    return urlparse(base.replace(URL_SCHEME, "http://", 1)).hostname or ""


def bounded_retry_policy(seconds: int) -> Any:
    """pyspark's default retries an unavailable endpoint for over 10 minutes: retry for about
    `seconds` instead (a restart is ridden out, a stopped endpoint fails the run in time)."""
    from pyspark.sql.connect.client.retries import DefaultPolicy

    waits, retries = 0.0, 0
    backoff = 0.2
    while waits < max(seconds, 1):
        waits += backoff
        backoff = min(backoff * 2, 2.0)
        retries += 1
    return DefaultPolicy(
        max_retries=retries,
        initial_backoff=200,
        backoff_multiplier=2.0,
        max_backoff=2000,
        min_jitter_threshold=2000,
    )


def open_session(url: str, retry_seconds: int, settings: Mapping[str, str] | None = None) -> Any:
    """A new Spark Connect session on `url` with the Spark `settings`, checked with a round
    trip (which also checks the token): connection errors surface here, not at the first
    model."""
    from pyspark.sql.connect.session import SparkSession as ConnectSession

    session = ConnectSession.builder.remote(url).create()
    close_without_pool_shutdown(session.client)
    session.client.set_retry_policies([bounded_retry_policy(retry_seconds)])
    try:
        for key, value in (settings or {}).items():
            session.conf.set(key, value)
        session.version  # noqa: B018 (an RPC: the server answers or refuses)
    except BaseException:
        close_session(session)
        raise
    close_at_exit(session)
    return session


def close_at_exit(session: Any) -> None:
    """Close `session` when the interpreter exits, if it is still open then. PySpark releases a
    server-cached relation in its `__del__` with a gRPC call, which blocks forever during the
    interpreter's finalization while the session is open (seen: a build on the thrift target
    whose process never exited)."""
    reference = weakref.ref(session)

    def close_if_open() -> None:
        open_session = reference()
        if open_session is not None and not open_session.client.is_closed:
            close_session(open_session)

    atexit.register(close_if_open)


def close_without_pool_shutdown(client: Any) -> None:
    """Make `client.close()` close its channel only. PySpark's also shuts down the process-wide
    pool that releases every Connect session's results, and joins its threads; its
    `SparkSession.__del__` calls it from whichever thread the garbage collector runs in, even
    inside a gRPC call that holds a lock those threads wait for: a deadlock (seen: a build
    with 4 threads on the connect target hung in `ThreadPoolExecutor.shutdown`)."""

    def close() -> None:
        client._channel.close()
        client._closed = True

    client.close = close


def close_session(session: Any) -> None:
    """Release the server-side session and close its channel; best effort, never raises.

    Not `session.stop()`: that also shuts down PySpark's process-wide pool which releases the
    results of every Connect session, so another session's next statement could fail with
    "cannot schedule new futures after shutdown" (seen in the adapter suite).
    """
    try:
        session.client.release_session()
    except Exception as exc:  # the endpoint may be gone
        logger.debug(f"Spark Connect session release failed: {exc}")
    close_without_pool_shutdown(session.client)
    session.client.close()


def _binding(value: Any) -> Any:
    """A bound value as a Spark literal of the right type (Spark Connect binds parameters
    as typed literals, so nothing is written into the SQL text)."""
    if isinstance(value, decimal.Decimal):
        return value
    if isinstance(value, datetime.datetime | datetime.date | int | float | bool | str):
        return value
    return None if value is None else str(value)


class ConnectConnectionWrapper(SparkConnectionWrapper):
    """A dbt-spark connection handle over one Spark Connect session."""

    def __init__(self, session: Any, url: str) -> None:
        self.session = session
        self.url = url  # redacted: for messages
        self._df: Any = None
        self._rows: list | None = None

    def cursor(self) -> ConnectConnectionWrapper:
        self._df, self._rows = None, None
        return self

    def cancel(self) -> None:
        try:
            self.session.interruptAll()
        except Exception as exc:  # the endpoint may be gone; dbt is cancelling anyway
            logger.debug(f"Spark Connect interrupt failed: {exc}")

    def close(self) -> None:
        self._df, self._rows = None, None
        close_session(self.session)

    def rollback(self, *args: Any, **kwargs: Any) -> None:
        logger.debug("NotImplemented: rollback")

    def execute(self, sql: str, bindings: list[Any] | None = None) -> None:
        sql = sql.strip()
        if sql.endswith(";"):
            sql = sql[:-1]
        self._rows = None
        if bindings:
            import sqlparams

            # dbt-spark's macros bind with %s; Spark's parameter marker is `?`.
            sql, values = sqlparams.SQLParams("format", "qmark").format(sql, bindings)
            self._df = self.session.sql(sql, args=[_binding(value) for value in values])
        else:
            # Commands (DDL, DML, SET) run here; a query is analysed here and runs when fetched.
            self._df = self.session.sql(sql)

    def fetchall(self) -> list | None:
        if self._rows is None and self._df is not None:
            self._rows = as_session_shows(self._df, self._df.collect())
        return self._rows

    def fetchone(self) -> Any:
        rows = self.fetchall()
        return rows.pop(0) if rows else None

    @property
    def description(self) -> list[tuple]:
        if self._df is None:
            return []
        return [
            (field.name, field.dataType.simpleString(), None, None, None, None, field.nullable)
            for field in self._df.schema.fields
        ]
