"""Counting the Spark SQL statements a dbt run sends, per dbt node.

On the embedded `session` target every statement reaches Spark through `SparkSession.sql`:
dbt-spark's session cursor sends the adapter's SQL (macros, metadata queries, the write) with
it, and Python models and the adapter's change-feed helpers call it themselves. While
`StatementCounter.counting()` is active, each call is recorded with the dbt node that was
running (dbt's NodeStart and NodeFinished events, received as a dbtRunner callback); statements
outside any node (the relation cache, the run's own hooks) are recorded under `None`.

DataFrame actions of a Python model that send no SQL text (`df.write`, `session.table(...)`)
are not statements and are not counted.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

_patch_lock = threading.Lock()


class StatementCounter:
    """Records every `SparkSession.sql` text while `counting()` is active, by dbt node."""

    def __init__(self) -> None:
        self.node: str | None = None
        self.statements: list[tuple[str | None, str]] = []

    def callback(self, event: Any) -> None:
        """A dbtRunner callback: follows which node is running."""
        name = event.info.name
        if name == "NodeStart":
            self.node = event.data.node_info.unique_id
        elif name == "NodeFinished":
            self.node = None

    def record(self, sql: str) -> None:
        self.statements.append((self.node, sql))

    def of_node(self, unique_id: str) -> list[str]:
        return [sql for node, sql in self.statements if node == unique_id]

    def outside_nodes(self) -> list[str]:
        return [sql for node, sql in self.statements if node is None]

    @contextmanager
    def counting(self) -> Iterator[StatementCounter]:
        from pyspark.sql import SparkSession

        with _patch_lock:
            original = SparkSession.sql
            counter = self

            def sql(session: Any, sqlQuery: str, *args: Any, **kwargs: Any) -> Any:  # noqa: N803
                counter.record(str(sqlQuery))
                return original(session, sqlQuery, *args, **kwargs)

            SparkSession.sql = sql  # type: ignore[method-assign]
            try:
                yield self
            finally:
                SparkSession.sql = original  # type: ignore[method-assign]


def statement_kind(sql: str) -> str:
    """The first words of a statement, lowercased (`describe detail`, `merge into`, `set`):
    what the bench reports next to each count."""
    words = sql.strip().split()
    while words and words[0].startswith("/*"):
        closing = next((i for i, w in enumerate(words) if w.endswith("*/")), len(words) - 1)
        words = words[closing + 1 :]
    if not words:
        return ""
    lowered = [w.lower() for w in words[:3]]
    if lowered[:3] == ["create", "or", "replace"]:
        return "create or replace"
    if lowered[0] in ("describe", "show", "create", "alter", "drop", "merge", "insert"):
        return " ".join(lowered[:2])
    return lowered[0]
