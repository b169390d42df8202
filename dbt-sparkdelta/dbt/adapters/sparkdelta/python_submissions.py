"""Python model submission on open-source Spark: in-process session or Spark Connect.

The compiled model code (dbt's `model()` plus the writer from `py_write_table`) expects a
global named `spark`; each helper supplies a SparkSession and executes the code.
"""

from __future__ import annotations

import os
import threading
import traceback
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


class _ExecPythonJobHelper(PythonJobHelper):
    method = ""

    def __init__(self, parsed_model: dict, credentials: SparkCredentials) -> None:
        self.parsed_model = parsed_model
        self.credentials = credentials

    def session(self) -> Any:
        raise NotImplementedError

    @contextmanager
    def api_mode(self, session: Any) -> Iterator[None]:
        yield

    def submit(self, compiled_code: str) -> str:
        model_id = self.parsed_model.get("unique_id", self.parsed_model.get("alias"))
        namespace = {"__name__": f"dbt_python_model.{self.parsed_model.get('alias')}"}
        namespace["spark"] = session = self.session()
        try:
            with self.api_mode(session):
                exec(compile(compiled_code, f"<{model_id}>", "exec"), namespace)
        except Exception as exc:
            # Keep the user's frames: the model file's line is what they need to see.
            detail = "".join(traceback.format_exception_only(type(exc), exc)).strip()
            raise DbtRuntimeError(f"Python model {model_id} failed: {detail}") from exc
        return self.method


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
    session = _connect_sessions.get(url)
    if session is None or session.is_stopped:
        # A remote method's server_side_parameters are session settings; the session
        # method's are its own JVM's (master, driver host), which a Connect session refuses.
        remote = credentials.method != SparkConnectionMethod.SESSION
        settings = credentials.server_side_parameters if remote else {}
        session = _connect_sessions[url] = open_session(url, credentials.connect_timeout, settings)
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
    def api_mode(self, session: Any) -> Iterator[None]:
        # pyspark.sql.functions builds Connect columns only when this variable is set; without
        # it, a process that also holds a classic session (the local target) would hand the
        # model classic columns that a Connect DataFrame cannot use.
        previous = os.environ.get(_CONNECT_MODE)
        os.environ[_CONNECT_MODE] = "1"
        # pandas-on-Spark finds its session as this thread's active one; dbt runs the model in
        # a thread of its own, where no Connect session is active yet.
        active = type(session)._active_session
        previous_session = getattr(active, "session", None)
        active.session = session
        try:
            yield
        finally:
            active.session = previous_session
            if previous is None:
                os.environ.pop(_CONNECT_MODE, None)
            else:
                os.environ[_CONNECT_MODE] = previous
