"""Python model submission on open-source Spark: in-process session or Spark Connect.

The compiled model code (dbt's `model()` plus the writer from `py_write_table`) expects a
global named `spark`; each helper supplies a SparkSession and executes the code.

dbt runs models in threads. What PySpark keeps per process is shared here with care: the
variable that makes `pyspark.sql.functions` build Spark Connect columns (API_MODES), and the
Spark Connect session per endpoint (opened once, under a lock; the client is thread-safe).
"""

from __future__ import annotations

import linecache
import os
import re
import threading
import traceback
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from dbt.adapters.base import PythonJobHelper
from dbt.adapters.spark.connections import SparkConnectionMethod, SparkCredentials
from dbt_common.exceptions import DbtRuntimeError

from dbt.adapters.sparkdelta.spark_connect import open_session, with_token

_CONNECT_MODE = "SPARK_CONNECT_MODE_ENABLED"
# One Spark Connect session per endpoint URL: the builder's getOrCreate() would hand back the
# process's first Connect session whatever URL is asked for.
_connect_sessions: dict[str, Any] = {}
_connect_sessions_lock = threading.Lock()


class ApiModes:
    """Which PySpark API this process's threads use at a time: `connect` or `classic`; and
    which thread has the embedded session to itself.

    PySpark decides per process, not per thread: `pyspark.sql.functions` builds Spark Connect
    columns only while SPARK_CONNECT_MODE_ENABLED is set, and with it set a classic session's
    functions and builder fail (a bare `AssertionError` from `F.col`, without a message). So the
    variable is set while at least one thread uses Spark Connect (not unset by the first of two
    Python models to finish: the cause of that intermittent AssertionError), and classic work
    (the embedded session's SQL and Python models) waits while Connect work runs and the other
    way round. Threads of the same API run together; a waiting API goes next (no starvation).
    A process with one API only (the thrift and connect targets, or the session target with
    in-process Python models) never waits.

    The variable is removed only when classic work is admitted (and by `release`, when dbt's
    threads are done), not when the last Connect thread finishes: removing an environment
    variable while another thread iterates `os.environ` (dbt's and the libraries' copies of
    it) makes that thread fail with `KeyError: 'SPARK_CONNECT_MODE_ENABLED'`. A Connect-only
    process so sets it once and never removes it during a run.

    `exclusive`: the embedded session's settings are shared by dbt's threads, so a statement
    whose commit must carry settings of its own (a change-feed model's watermark in the commit
    metadata) runs alone, between its SET and RESET; other threads wait that long.
    """

    def __init__(self) -> None:
        self._changed = threading.Condition()
        self._mode: str | None = None
        self._exclusive = False
        self._running = 0
        self._waiting: Counter[tuple[str, bool]] = Counter()
        self._held = threading.local()  # this thread's (mode, exclusive) while it holds one

    @contextmanager
    def using(self, mode: str, exclusive: bool = False) -> Iterator[None]:
        held = getattr(self._held, "mode", None)
        if held is not None:
            held_mode, held_exclusive = held
            if held_mode == mode and (held_exclusive or not exclusive):
                yield  # nested, e.g. a statement inside a model: already admitted
                return
            wanted = f"{mode}{' alone' if exclusive else ''}"
            raise RuntimeError(
                f"a thread using the {held_mode} PySpark API cannot switch to {wanted}"
            )
        key = (mode, exclusive)
        with self._changed:
            self._waiting[key] += 1
            while not self._admits(key):
                self._changed.wait()
            self._waiting[key] -= 1
            if self._running == 0:
                self._mode, self._exclusive = mode, exclusive
                if mode == "connect":
                    os.environ[_CONNECT_MODE] = "1"
                else:
                    os.environ.pop(_CONNECT_MODE, None)
            self._running += 1
        self._held.mode = key
        try:
            yield
        finally:
            self._held.mode = None
            with self._changed:
                self._running -= 1
                if self._running == 0:
                    self._mode, self._exclusive = None, False
                self._changed.notify_all()

    def release(self) -> None:
        """Turn Connect mode off when no thread uses either API (dbt's run is over): the
        process's later classic work, outside dbt's threads, needs it off."""
        with self._changed:
            if self._running == 0:
                os.environ.pop(_CONNECT_MODE, None)

    def _admits(self, key: tuple[str, bool]) -> bool:
        if self._running == 0:
            return True
        mode, exclusive = key
        if exclusive or self._exclusive or self._mode != mode:
            return False
        return not any(n for other, n in self._waiting.items() if other != key)


API_MODES = ApiModes()


class _ExecPythonJobHelper(PythonJobHelper):
    method = ""

    def __init__(self, parsed_model: dict, credentials: SparkCredentials) -> None:
        self.parsed_model = parsed_model
        self.credentials = credentials

    def session(self) -> Any:
        raise NotImplementedError

    def submit(self, compiled_code: str) -> str:
        model_id = self.parsed_model.get("unique_id", self.parsed_model.get("alias"))
        namespace = {"__name__": f"dbt_python_model.{self.parsed_model.get('alias')}"}
        filename = f"<{model_id}>"
        # Without the blank lines Jinja leaves before it, the code's line numbers are those of
        # the compiled model dbt names in its error (target/compiled/...).
        compiled_code = re.sub(r"\A(?:[ \t]*\n)+", "", compiled_code)
        # The model's source for its traceback lines (compiled code has no file of its own).
        lines = compiled_code.splitlines(keepends=True)
        linecache.cache[filename] = (len(compiled_code), None, lines, filename)
        try:
            with self.api_mode():
                namespace["spark"] = session = self.session()
                with self.activated(session):
                    exec(compile(compiled_code, filename, "exec"), namespace)
        except Exception as exc:
            raise DbtRuntimeError(
                f"Python model {model_id} failed: {model_error(exc, filename)}"
            ) from exc
        return self.method

    @contextmanager
    def api_mode(self) -> Iterator[None]:
        with API_MODES.using("classic"):
            yield

    @contextmanager
    def activated(self, session: Any) -> Iterator[None]:
        yield


def model_error(exc: BaseException, filename: str) -> str:
    """The exception's type and message, then the traceback from the model's code on (its
    lines included): an exception with an empty message (a bare `AssertionError()`) must
    still say what failed and where."""
    frames = traceback.extract_tb(exc.__traceback__)
    first = next((i for i, frame in enumerate(frames) if frame.filename == filename), 0)
    summary = "".join(traceback.format_exception_only(type(exc), exc)).strip()
    stack = "".join(traceback.format_list(frames[first:])).rstrip()
    return f"{summary}\nTraceback (most recent call last):\n{stack}" if stack else summary


class SessionPythonJobHelper(_ExecPythonJobHelper):
    """Runs the model in this process, on the SparkSession dbt's SQL uses."""

    method = "session"

    def session(self) -> Any:
        from dbt.adapters.sparkdelta.session import get_or_create_session

        return get_or_create_session()


_connection_session = threading.local()


@contextmanager
def connection_session(session: Any) -> Iterator[None]:
    """While a Python model of the `connect` method runs: the Spark Connect session of its
    dbt connection (this thread's), which the model then uses."""
    previous = getattr(_connection_session, "session", None)
    _connection_session.session = session
    try:
        yield
    finally:
        _connection_session.session = previous


def shared_connect_session(credentials: Any, url: str) -> Any:
    """This process's Spark Connect session on `url` (opened on first use), for Python models
    and the thrift method's seeds."""
    with _connect_sessions_lock:  # dbt's threads ask at once: open one session, not several
        session = _connect_sessions.get(url)
        if session is None or session.is_stopped:
            # A remote method's server_side_parameters are session settings; the session
            # method's are its own JVM's (master, driver host), which a Connect session refuses.
            remote = credentials.method != SparkConnectionMethod.SESSION
            settings = credentials.server_side_parameters if remote else {}
            session = open_session(url, credentials.connect_timeout, settings)
            _connect_sessions[url] = session
    return session


class SparkConnectPythonJobHelper(_ExecPythonJobHelper):
    """Runs the model through a Spark Connect endpoint: the `connect` method's own, or the one
    of `spark_connect_url` (for clusters reached over Thrift)."""

    method = "spark_connect"

    def session(self) -> Any:
        own = getattr(_connection_session, "session", None)
        model_url = self.parsed_model["config"].get("spark_connect_url")
        if own is not None and not model_url:
            return own
        connect_url = getattr(self.credentials, "connect_url", None)
        url = model_url or (connect_url() if connect_url else None)
        if model_url and getattr(self.credentials, "token", None):
            url = with_token(model_url, self.credentials.token)
        if not url:
            raise DbtRuntimeError(
                f"Python model {self.parsed_model.get('unique_id')} uses submission_method "
                "'spark_connect' but no endpoint is set: add `spark_connect_url: sc://host:15002` "
                "to the profile (or the model config), or set SPARK_REMOTE."
            )
        return shared_connect_session(self.credentials, url)

    @contextmanager
    def api_mode(self) -> Iterator[None]:
        # pyspark.sql.functions builds Connect columns only in Connect mode (API_MODES).
        with API_MODES.using("connect"):
            yield

    @contextmanager
    def activated(self, session: Any) -> Iterator[None]:
        # pandas-on-Spark finds its session as this thread's active one; dbt runs the model in
        # a thread of its own, where no Connect session is active yet.
        active = type(session)._active_session
        previous = getattr(active, "session", None)
        active.session = session
        try:
            yield
        finally:
            active.session = previous
