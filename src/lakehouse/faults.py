"""Deterministic crash points for the reliability tests (inactive unless LAKEHOUSE_KILL_AT is set).

`LAKEHOUSE_KILL_AT=<when>:<where>[:<statement>]` makes the process die by SIGKILL, together with
its Spark JVM, at a named point, as a power cut would:

- `when`: `before` (the statement is not sent), `during` (as soon as the statement's first
  Spark job runs: its data files may be half written, its commit is not made) or `after`
  (the statement returned: its commit is made, nothing after it ran);
- `where`: a dbt node name (`int_orders_deduplicated`), a bronze table (`bronze.orders`) or
  `*` for any;
- `statement`: the start of the Delta statement (`merge`, `optimize`, `insert into`,
  `create or replace table`); any when omitted.

The adapter calls `before_statement`, `during_statement` and `after_statement` around every
statement it runs; the bronze loader calls `after_statement` after each table's append.
"""

from __future__ import annotations

import os
import signal
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

ENV = "LAKEHOUSE_KILL_AT"


def _spec() -> tuple[str, str, str] | None:
    value = os.environ.get(ENV, "").strip()
    if not value:
        return None
    when, _, rest = value.partition(":")
    where, _, statement = rest.partition(":")
    return when.lower(), where.lower(), statement.lower()


def matches(when: str, node: str | None, verb: str | None) -> bool:
    spec = _spec()
    if spec is None or spec[0] != when:
        return False
    _, where, statement = spec
    name = (node or "").lower()
    if where != "*" and where not in (name, name.rsplit(".", 1)[-1]):
        return False
    return not statement or (verb or "").lower().startswith(statement)


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

    watcher = threading.Thread(target=watch, name="lakehouse-kill-during", daemon=True)
    watcher.start()
    try:
        yield
    finally:
        done.set()
