"""Deterministic crash points for reliability tests (inactive unless SPARKDELTA_KILL_AT or
SPARKDELTA_FAIL_AT is set).

`SPARKDELTA_KILL_AT=<when>:<where>[:<statement>]` makes the process die by SIGKILL, together with
its Spark JVM, at a named point, as a power cut would:

- `when`: `before` (the statement is not sent), `during` (as soon as the statement's first
  Spark job runs: its data files may be half written, its commit is not made) or `after`
  (the statement returned: its commit is made, nothing after it ran);
- `where`: a dbt node name (`int_orders_deduplicated`), another point a tool names itself (a
  data loader might call `after_statement("bronze_3.orders", ...)`), or `*` for any;
- `statement`: the start of the Delta write (`merge`, `optimize`, `insert into`,
  `create or replace table`); when omitted, any Delta write of that node (reads, such as a
  model's compile-time queries, never match).

`SPARKDELTA_FAIL_AT=before:<where>[:<statement>]` makes that statement fail with an error
instead (the process lives on), e.g. a write that fails just before its commit.

The adapter calls `before_statement`, `during_statement` and `after_statement` around every
statement it runs; other tools may call them around their own writes.
"""

from __future__ import annotations

import os
import signal
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

from dbt_common.exceptions import DbtRuntimeError

ENV = "SPARKDELTA_KILL_AT"
FAIL_ENV = "SPARKDELTA_FAIL_AT"


class InjectedFailure(DbtRuntimeError):
    """The failure SPARKDELTA_FAIL_AT asked for."""


def _spec(env: str) -> tuple[str, str, str] | None:
    value = os.environ.get(env, "").strip()
    if not value:
        return None
    when, _, rest = value.partition(":")
    where, _, statement = rest.partition(":")
    return when.lower(), where.lower(), statement.lower()


def matches(when: str, node: str | None, verb: str | None, env: str = ENV) -> bool:
    spec = _spec(env)
    if spec is None or spec[0] != when:
        return False
    _, where, statement = spec
    name = (node or "").lower()
    if where != "*" and where not in (name, name.rsplit(".", 1)[-1]):
        return False
    if verb is None:
        return False  # not a Delta write
    return not statement or verb.lower().startswith(statement)


def kill_now() -> None:
    """SIGKILL the Spark JVM (when this process started it) and this process."""
    from pyspark import SparkContext

    context = SparkContext._active_spark_context
    process = getattr(getattr(context, "_gateway", None), "proc", None)
    if process is not None:
        os.kill(process.pid, signal.SIGKILL)
    os.kill(os.getpid(), signal.SIGKILL)


def before_statement(node: str | None, verb: str | None) -> None:
    if matches("before", node, verb):
        kill_now()
    if matches("before", node, verb, FAIL_ENV):
        raise InjectedFailure(f"{FAIL_ENV}: injected failure before the {verb} of {node}")


def after_statement(node: str | None, verb: str | None) -> None:
    if matches("after", node, verb):
        kill_now()


@contextmanager
def during_statement(node: str | None, verb: str | None) -> Iterator[None]:
    """Run the statement; when it is the named one, die once its first Spark job runs."""
    if not matches("during", node, verb):
        yield
        return
    from pyspark import SparkContext

    tracker = SparkContext._active_spark_context.statusTracker()
    done = threading.Event()

    def watch() -> None:
        while not done.is_set():
            if tracker.getActiveJobsIds():
                kill_now()
            time.sleep(0.01)

    watcher = threading.Thread(target=watch, name="sparkdelta-kill-during", daemon=True)
    watcher.start()
    try:
        yield
    finally:
        done.set()
