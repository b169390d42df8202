"""Concurrent writers: threads of one JVM, each statement its own Delta transaction; conflicts
retried by the adapter's retry policy, or reported by name when they must not be."""

from __future__ import annotations

import logging
import threading
import time

from dbt.adapters.sparkdelta import retry
from python_tests.conftest import RELIABILITY
from python_tests.integration.reliability.shared import model_sql


def in_threads(*targets) -> list[BaseException]:
    """Run the callables at once, each in its own thread; return what they raised."""
    errors: list[BaseException] = []
    start = threading.Barrier(len(targets))

    def run(target) -> None:
        start.wait()
        try:
            target()
        except BaseException as exc:  # noqa: B036 - reported to the test
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(t,)) for t in targets]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=900)
    return errors


class RetryCounter(logging.Handler):
    """Counts the conflict retries run_with_retry logs while the `with` block runs."""

    def __init__(self) -> None:
        super().__init__()
        self.count = 0

    def emit(self, record: logging.LogRecord) -> None:
        self.count += record.getMessage().startswith("Delta conflict on")

    def __enter__(self) -> RetryCounter:
        logging.getLogger(retry.__name__).addHandler(self)
        return self

    def __exit__(self, *exc: object) -> None:
        logging.getLogger(retry.__name__).removeHandler(self)


class TestConcurrentWriters:
    WRITERS, BATCHES, ROWS = 4, 5, 40

    def test_concurrent_idempotent_appends_to_one_table(self, dbt_project):
        spark, table = dbt_project.spark, dbt_project.relation("appended")
        spark.sql(f"create schema if not exists `{dbt_project.schema}`")
        spark.sql(f"create or replace table {table} (writer int, batch int, n int) using delta")

        def writer(w: int):
            def run() -> None:
                # Batch 2 is sent twice: a retried append of the same batch must not duplicate.
                for batch in [*range(self.BATCHES), 2]:
                    frame = spark.range(self.ROWS).selectExpr(
                        f"{w} as writer", f"{batch} as batch", "cast(id as int) as n"
                    )
                    write = (
                        frame.write.format("delta")
                        .mode("append")
                        .option("txnAppId", f"reliability.writer.{w}")
                        .option("txnVersion", batch)
                    )
                    retry.run_with_retry(
                        lambda write=write: write.saveAsTable(table), table, "append"
                    )

            return run

        assert in_threads(*(writer(w) for w in range(self.WRITERS))) == []
        expected = self.WRITERS * self.BATCHES * self.ROWS
        total, distinct = spark.sql(
            f"select count(*), count(distinct writer, batch, n) from {table}"
        ).first()
        assert (total, distinct) == (expected, expected), "rows lost or duplicated"
        appends = [h for h in dbt_project.history("appended") if h.operation == "WRITE"]
        assert len(appends) == self.WRITERS * self.BATCHES  # the repeated batch: no commit
        RELIABILITY["concurrent writers"] += self.WRITERS
        RELIABILITY["retried appends skipped by txnAppId"] += self.WRITERS
        RELIABILITY["rows checked, none lost or duplicated"] += expected

    def test_merge_model_while_optimize_and_appends_run(self, scratch_project):
        """dbt's MERGE of an incremental model, two OPTIMIZE loops and an appender, at once.
        MERGE and OPTIMIZE lose races to each other (ConcurrentAppendException,
        ConcurrentDeleteReadException...): the adapter and run_with_retry retry them."""
        p = scratch_project
        spark, source = p.spark, p.relation("merge_source")
        spark.sql(f"create schema if not exists `{p.schema}`")
        spark.sql(f"create or replace table {source} (id int, v int, batch int) using delta")
        spark.sql(f"insert into {source} select cast(id as int), 0, 0 from range(200)")
        p.model(
            "merged",
            model_sql(
                # deletion vectors, like the silver tables: each MERGE adds files, so OPTIMIZE
                # has work on any machine (without them a small MERGE rewrites the one file)
                "materialized='incremental', unique_key='id', "
                "tblproperties={'delta.enableDeletionVectors': 'true'}",
                "select id, max_by(v, batch) as v from {{ this.schema }}.merge_source group by id",
            ),
        )
        p.dbt("run", "-s", "merged")
        target = p.relation("merged")
        # Several files, so OPTIMIZE has work each round.
        for n in range(4):
            spark.sql(f"insert into {source} select cast(id as int), {n + 1}, {n + 1} "
                      f"from range({n * 50}, {n * 50 + 100})")  # fmt: skip
        retries = RetryCounter()

        merging = threading.Event()
        merging.set()

        def merges() -> None:
            try:
                for _ in range(3):
                    p.dbt("run", "-s", "merged")
            finally:
                merging.clear()

        def optimizer() -> None:
            # Compacts the files each MERGE leaves, for as long as the merges run.
            while merging.is_set():
                retry.run_with_retry(
                    lambda: spark.sql(f"optimize {target}").collect(), target, "OPTIMIZE"
                )
                time.sleep(0.5)

        def appender() -> None:
            for batch in range(10, 16):
                spark.sql(
                    f"insert into {source} select cast(id as int), {batch}, {batch} "
                    f"from range({batch * 20}, {batch * 20 + 60})"
                )

        with retries:
            assert in_threads(merges, optimizer, optimizer, appender) == []
        p.dbt("run", "-s", "merged")  # the last batch of the source, after the race
        expected = spark.sql(
            f"select id, max_by(v, batch) as v from {source} group by id order by id"
        ).collect()
        got = spark.sql(f"select id, v from {target} order by id").collect()
        assert got == expected, "the MERGE model lost or duplicated rows"
        operations = {h.operation for h in p.history("merged")}
        assert {"MERGE", "OPTIMIZE"} <= operations
        RELIABILITY["concurrent writers"] += 4
        RELIABILITY["conflict retries"] += retries.count
        RELIABILITY["rows checked, none lost or duplicated"] += len(expected)

    def test_metadata_change_is_not_retried_and_names_table_and_operation(self, dbt_project):
        spark, table = dbt_project.spark, dbt_project.relation("changing")
        spark.sql(f"create schema if not exists `{dbt_project.schema}`")
        spark.sql(f"create or replace table {table} (id int) using delta")
        spark.sql(f"insert into {table} select cast(id as int) from range(100)")
        raised: list[BaseException] = []
        for attempt in range(8):  # a race: usually the first round conflicts

            def alter(attempt=attempt) -> None:
                spark.sql(f"alter table {table} set tblproperties ('round' = '{attempt}')")

            def insert() -> None:
                retry.run_with_retry(
                    lambda: spark.sql(
                        f"insert into {table} select id + 1000 from {table} where id < 5"
                    ).collect(),
                    table,
                    "INSERT INTO (reads the table)",
                    sleep=lambda _: None,
                )

            raised = in_threads(alter, insert)
            if raised:
                break
        assert raised, "no metadata conflict in 8 rounds"
        [error] = raised
        assert isinstance(error, retry.DeltaConflictError)
        assert error.conflict.exception == "MetadataChangedException"
        message = str(error)
        assert table in message and "concurrent SET TBLPROPERTIES" in message
        assert "Not retried" in message
        RELIABILITY["non-retryable conflicts reported"] += 1
