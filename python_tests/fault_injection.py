"""Deterministic crash points for the reliability tests (inactive unless SPARKDELTA_KILL_AT or
SPARKDELTA_FAIL_AT is set). Test code only: `install()` wraps the statements the adapter sends
(dbt-spark's execute, under the adapter's retries) and the bronze loader's appends; the
conftest installs it in the test process, and a subprocess gets it by running its command
through this module: `python -m python_tests.fault_injection dbt build ...` (or `lakehouse`).

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

"""

from __future__ import annotations

import functools
import os
import signal
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

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


def install() -> None:
    """Wrap every statement the sparkdelta adapter sends (dbt-spark's execute, which its
    connection manager calls once per attempt) and each bronze append of the loader."""
    from dbt.adapters.spark.connections import SparkConnectionManager

    from dbt.adapters.sparkdelta.retry import describe_statement
    from lakehouse.shop import bronze

    if getattr(SparkConnectionManager.execute, "fault_injection", False):
        return
    execute = SparkConnectionManager.execute

    @functools.wraps(execute)
    def execute_with_faults(self: Any, sql: str, *args: Any, **kwargs: Any) -> Any:
        verb, _ = describe_statement(sql)
        connection = self.get_if_exists()
        node = connection.name if connection is not None else None
        before_statement(node, verb)
        with during_statement(node, verb):
            result = execute(self, sql, *args, **kwargs)
        after_statement(node, verb)
        return result

    execute_with_faults.fault_injection = True  # type: ignore[attr-defined]
    SparkConnectionManager.execute = execute_with_faults  # type: ignore[method-assign]

    run_with_retry = bronze.run_with_retry

    def bronze_append(action: Any, table: str, what: str, **kwargs: Any) -> Any:
        """The loader's append of one batch to one table: `bronze_<batch>.<table>`."""
        result = run_with_retry(action, table, what, **kwargs)
        batch = what.rsplit(" ", 1)[-1]
        after_statement(f"bronze_{batch}.{table.rsplit('.', 1)[-1].strip('`')}", "insert into")
        return result

    bronze.run_with_retry = bronze_append


def main(argv: list[str]) -> int:
    """Run `dbt ...` or `lakehouse ...` in this process with the crash points installed."""
    install()
    tool, *args = argv
    if tool == "lakehouse":
        from lakehouse.cli import main as lakehouse_main

        return lakehouse_main(args)
    from dbt.cli.main import cli

    return cli.main(args, prog_name="dbt")  # exits with dbt's own code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
