"""Python models in dbt's threads (no Spark JVM): PySpark's process-wide API mode shared by
concurrent models, and a failing model's error (python_submissions.py)."""

from __future__ import annotations

import os
import threading

import pytest
from dbt_common.exceptions import DbtRuntimeError

from dbt.adapters.sparkdelta.python_submissions import (
    API_MODES,
    ApiModes,
    SessionPythonJobHelper,
    SparkConnectPythonJobHelper,
)

WAIT = 20  # seconds: generous for a loaded machine; a timeout fails the test, never hangs it


class FakeConnectSession:
    """What the helper needs of a Spark Connect session: its thread's active-session slot."""

    _active_session = threading.local()


class Helper(SparkConnectPythonJobHelper):
    def __init__(self, name: str) -> None:
        super().__init__({"unique_id": f"model.p.{name}", "alias": name, "config": {}}, None)

    def session(self) -> FakeConnectSession:
        return FakeConnectSession()


def run_in_thread(target) -> tuple[threading.Thread, list[BaseException]]:
    errors: list[BaseException] = []

    def run() -> None:
        try:
            target()
        except BaseException as exc:  # noqa: B036 - reported to the test
            errors.append(exc)

    thread = threading.Thread(target=run)
    thread.start()
    return thread, errors


@pytest.fixture(autouse=True)
def classic_mode_after_each_test():
    """Connect mode is process-wide: no test leaves it on for the next."""
    yield
    os.environ.pop("SPARK_CONNECT_MODE_ENABLED", None)


# What the models below wait on (the model code runs in a namespace of its own).
EVENTS: dict[str, threading.Event] = {}


def test_a_connect_model_keeps_connect_mode_when_another_one_finishes_first():
    """The cause of the intermittent bare `AssertionError` (issue 28, item 1): two Python
    models over Spark Connect at once; the first to start, finishing first, used to unset the
    process-wide SPARK_CONNECT_MODE_ENABLED, so the other's `F.col` took PySpark's classic path
    and failed with `assert SparkContext._active_spark_context is not None`. Forced order,
    every time: A starts, B starts, A finishes, then B builds a column."""
    assert "SPARK_CONNECT_MODE_ENABLED" not in os.environ
    EVENTS.update({name: threading.Event() for name in ("a_started", "b_started", "a_done")})
    events = f"from {__name__} import EVENTS\n"
    model_a = (
        f"{events}EVENTS['a_started'].set()\n"
        f"assert EVENTS['b_started'].wait({WAIT}), 'B never started'\n"
    )
    model_b = (
        f"{events}import pyspark.sql.functions as F\n"
        "EVENTS['b_started'].set()\n"
        f"assert EVENTS['a_done'].wait({WAIT}), 'A never finished'\n"
        "column = F.col('amount')\n"
        "assert type(column).__module__.startswith('pyspark.sql.connect'), type(column)\n"
    )
    first, a_errors = run_in_thread(lambda: Helper("a").submit(model_a))
    assert EVENTS["a_started"].wait(WAIT)
    second, b_errors = run_in_thread(lambda: Helper("b").submit(model_b))
    first.join(WAIT)
    EVENTS["a_done"].set()
    second.join(WAIT)
    assert not first.is_alive() and not second.is_alive()
    assert a_errors == [] and b_errors == []
    # Still set after the last one (see the test below); classic again when dbt's run is over.
    assert os.environ.get("SPARK_CONNECT_MODE_ENABLED") == "1"
    API_MODES.release()
    assert "SPARK_CONNECT_MODE_ENABLED" not in os.environ


def test_connect_models_never_remove_the_variable_under_a_thread_reading_the_environment():
    """CI's multihost build (stop 48): a unit test failed with `Runtime Error
    'SPARK_CONNECT_MODE_ENABLED'`. Python models over Connect removed the variable when they
    finished, while another dbt thread was copying `os.environ` (its keys, then each value):
    a KeyError. A Connect-only process now sets it once; classic work removes it."""
    modes = ApiModes()
    stop, errors = threading.Event(), []

    def copy_the_environment() -> None:
        while not stop.is_set():
            try:
                dict(os.environ.items())
            except KeyError as exc:
                errors.append(exc)
                return

    reader = threading.Thread(target=copy_the_environment)
    reader.start()
    try:
        for _ in range(20_000):  # the removal on exit lost this race within a few thousand
            with modes.using("connect"):
                pass
    finally:
        stop.set()
        reader.join(WAIT)
    assert errors == []
    assert os.environ.get("SPARK_CONNECT_MODE_ENABLED") == "1"
    with modes.using("classic"):
        assert "SPARK_CONNECT_MODE_ENABLED" not in os.environ


def test_classic_work_waits_while_connect_work_runs_then_goes_next():
    modes = ApiModes()
    order: list[str] = []
    connect_in, release_connect = threading.Event(), threading.Event()

    def connect() -> None:
        with modes.using("connect"):
            order.append("connect in")
            connect_in.set()
            assert release_connect.wait(WAIT)
            order.append("connect out")

    def classic() -> None:
        with modes.using("classic"):
            order.append("classic in")
            assert "SPARK_CONNECT_MODE_ENABLED" not in os.environ

    connecting, connect_errors = run_in_thread(connect)
    assert connect_in.wait(WAIT)
    assert os.environ.get("SPARK_CONNECT_MODE_ENABLED") == "1"
    classic_thread, classic_errors = run_in_thread(classic)
    classic_thread.join(0.5)
    assert classic_thread.is_alive(), "classic work ran while Connect mode was on"
    # A second Connect model now waits too: the classic one, waiting first, goes next.
    late, late_errors = run_in_thread(lambda: modes.using("connect").__enter__())
    late.join(0.5)
    assert late.is_alive()
    release_connect.set()
    for thread in (connecting, classic_thread):
        thread.join(WAIT)
    late.join(WAIT)
    assert order == ["connect in", "connect out", "classic in"]
    assert connect_errors == classic_errors == late_errors == []


def test_same_mode_nests_and_a_switch_inside_is_refused():
    modes = ApiModes()
    with modes.using("classic"), modes.using("classic"):
        with pytest.raises(RuntimeError, match="cannot switch"):
            with modes.using("connect"):
                pass
    with modes.using("connect"):  # free again
        assert os.environ.get("SPARK_CONNECT_MODE_ENABLED") == "1"
    modes.release()
    assert "SPARK_CONNECT_MODE_ENABLED" not in os.environ


class FailingSessionHelper(SessionPythonJobHelper):
    """Records the process-wide API mode it runs under (API_MODES, held while the model runs)."""

    def __init__(self, parsed_model: dict) -> None:
        super().__init__(parsed_model, None)
        self.held: list[tuple[str | None, int]] = []

    def session(self) -> object:
        self.held.append((API_MODES._mode, API_MODES._running))
        return object()


def test_an_exception_without_a_message_still_names_its_type_and_line():
    helper = FailingSessionHelper({"unique_id": "model.p.broken", "alias": "broken"})
    code = "def model(dbt, spark):\n    check = 0\n    assert check, ''\n\nmodel(None, spark)\n"
    with pytest.raises(DbtRuntimeError) as raised:
        helper.submit(code)
    message = str(raised.value)
    assert "Python model model.p.broken failed: AssertionError" in message
    assert 'File "<model.p.broken>", line 3, in model' in message
    assert "assert check, ''" in message  # the model's own line, shown
    # The model ran holding the process's classic API mode, and its failure released it.
    assert helper.held == [("classic", 1)]
    assert (API_MODES._mode, API_MODES._running) == (None, 0)


def test_a_settings_window_on_the_embedded_session_runs_alone():
    """A statement whose commit carries session settings of its own (a change-feed
    watermark) runs between its SET and RESET with no other classic statement at once."""
    modes = ApiModes()
    order: list[str] = []
    shared_in, release_shared = threading.Event(), threading.Event()
    alone_in, release_alone = threading.Event(), threading.Event()

    def shared() -> None:
        with modes.using("classic"):
            shared_in.set()
            assert release_shared.wait(WAIT)
            order.append("shared out")

    def alone() -> None:
        with modes.using("classic", exclusive=True):
            order.append("alone in")
            with modes.using("classic"):  # its own SET, statement and RESET: nested
                alone_in.set()
                assert release_alone.wait(WAIT)
            order.append("alone out")

    def later() -> None:
        with modes.using("classic"):
            order.append("later in")

    first, e1 = run_in_thread(shared)
    assert shared_in.wait(WAIT)
    window, e2 = run_in_thread(alone)
    window.join(0.5)
    assert order == [], "the settings window opened while another statement ran"
    release_shared.set()
    assert alone_in.wait(WAIT)
    third, e3 = run_in_thread(later)
    third.join(0.5)
    assert order == ["shared out", "alone in"], "a statement ran inside the settings window"
    release_alone.set()
    for thread in (first, window, third):
        thread.join(WAIT)
    assert order == ["shared out", "alone in", "alone out", "later in"]
    assert e1 == e2 == e3 == []
    with modes.using("classic"), pytest.raises(RuntimeError, match="classic alone"):
        with modes.using("classic", exclusive=True):
            pass
