"""Concurrent writers: threads of one JVM, each statement its own Delta transaction; conflicts
retried by the adapter's retry policy, or reported by name when they must not be."""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
import threading
import time
from datetime import datetime
from pathlib import Path

import pytest

from dbt.adapters.sparkdelta import retry
from python_tests.conftest import (
    PROJECT_DIR,
    RELIABILITY,
    endpoint_env,
    running_test_endpoint,
    unique_schema,
)
from python_tests.integration.conftest import SCRATCH_PROJECT_YML
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
                # deletion vectors, like the silver tables: a MERGE that keeps some rows of a
                # file adds a file beside it (without them a small MERGE rewrites the one file)
                "materialized='incremental', unique_key='id', "
                "tblproperties={'delta.enableDeletionVectors': 'true'}",
                "select id, max_by(v, batch) as v from {{ this.schema }}.merge_source group by id",
            ),
        )
        p.dbt("run", "-s", "merged")
        target = p.relation("merged")
        # Changes to ids 0-124 of 200: the first MERGE leaves the rest of the first file alive
        # behind a deletion vector beside the file it writes, so OPTIMIZE has two to compact (a
        # MERGE that updates every row of a file removes it whole).
        for n in range(4):
            spark.sql(f"insert into {source} select cast(id as int), {n + 1}, {n + 1} "
                      f"from range({n * 25}, {n * 25 + 50})")  # fmt: skip
        retries = RetryCounter()

        merging = threading.Event()
        merging.set()
        compacted = threading.Event()  # an OPTIMIZE that rewrote files has committed

        def merges() -> None:
            try:
                # The first MERGE leaves files to compact: an OPTIMIZE commits one compaction
                # however slow the machine (one with nothing to compact commits nothing); the
                # next merges race the OPTIMIZE loops.
                p.dbt("run", "-s", "merged")
                assert compacted.wait(timeout=300), "no OPTIMIZE compacted a file"
                for _ in range(2):
                    p.dbt("run", "-s", "merged")
            finally:
                merging.clear()

        def optimizer() -> None:
            # Compacts the files each MERGE leaves, for as long as the merges run.
            while merging.is_set():
                [done] = retry.run_with_retry(
                    lambda: spark.sql(f"optimize {target}").collect(), target, "OPTIMIZE"
                )
                if done.metrics.numFilesRemoved:
                    compacted.set()
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


# A table model and a Python model that each take SLEEP_MS inside their write (the query sleeps
# on the endpoint), so two processes that start them a few seconds apart overlap; each row says
# which dbt invocation wrote it.
SLEEP_MS = 12000
REPLACED_SQL = f"""
{{{{ config(materialized='table') }}}}
select
    id,
    '{{{{ invocation_id }}}}' as invocation_id,
    reflect('java.lang.Thread', 'sleep', cast({SLEEP_MS} as bigint)) as slept
from range(3)
where id < 3
"""
REPLACED_PY = f"""
def model(dbt, spark):
    dbt.config(materialized="table")
    return spark.sql(
        "select id, reflect('java.lang.Thread', 'sleep', cast({SLEEP_MS} as bigint)) as slept "
        "from range(1)"
    ).crossJoin(spark.range(3).withColumnRenamed("id", "n")).drop("slept")
"""
REPLACED = ("replaced_sql", "replaced_py")


@pytest.fixture(scope="class")
def replacers(tmp_path_factory):
    """An endpoint of its own, a scratch project with the two models, a Connect session that
    reads the tables."""
    from dbt.adapters.sparkdelta.spark_connect import close_session, open_session

    project_dir = tmp_path_factory.mktemp("replacers_project")
    (project_dir / "dbt_project.yml").write_text(SCRATCH_PROJECT_YML)
    (project_dir / "models").mkdir()
    (project_dir / "models" / "replaced_sql.sql").write_text(REPLACED_SQL)
    (project_dir / "models" / "replaced_py.py").write_text(REPLACED_PY)
    with running_test_endpoint(endpoint_env(tmp_path_factory)) as settings:
        session = open_session(settings.connect_url, 10)
        try:
            yield settings, project_dir, session, tmp_path_factory.mktemp("replacers")
        finally:
            close_session(session)


def run_results(work: Path) -> dict[str, dict]:
    results = json.loads((work / "target" / "run_results.json").read_text())
    return {r["unique_id"].split(".")[-1]: r for r in results["results"]} | {
        "": results["metadata"]
    }


def execute_window(result: dict) -> tuple[datetime, datetime]:
    [execute] = [t for t in result["timing"] if t["name"] == "execute"]
    return tuple(
        datetime.fromisoformat(execute[key].replace("Z", "+00:00"))
        for key in ("started_at", "completed_at")
    )


@pytest.mark.slow
@pytest.mark.endpoint
class TestTwoProcessesReplaceOneModel:
    """Two `dbt run` processes (thrift target: SQL over Thrift, the Python model over Spark
    Connect) replace the same table model and the same Python model at once. A whole-table
    replace is idempotent, so the loser's MetadataChangedException is retried: both finish,
    DESCRIBE HISTORY has both replaces, the rows are one writer's whole result."""

    ROUNDS = 3  # a round whose two runs did not overlap (slow start-up) is run again

    def test_both_replaces_commit(self, replacers):
        settings, project_dir, session, work = replacers
        schema = unique_schema("replacers")
        env = {
            **{k: v for k, v in os.environ.items() if k != "SPARKDELTA_KILL_AT"},
            "LAKEHOUSE_TARGET": "thrift",
            "LAKEHOUSE_THRIFT_PORT": str(settings.thrift_port),
            "LAKEHOUSE_SPARK_CONNECT_URL": settings.connect_url,
            "LAKEHOUSE_CONNECT_TOKEN": "",
            "LAKEHOUSE_SCHEMA": schema,
        }

        def dbt_run(name: str) -> tuple[subprocess.Popen, Path]:
            run_dir = work / name
            run_dir.mkdir()
            out = open(run_dir / "out.log", "w")  # noqa: SIM115 - closed with the process
            process = subprocess.Popen(
                [
                    str(Path(sys.executable).parent / "dbt"), "run",
                    "--project-dir", str(project_dir), "--profiles-dir", str(PROJECT_DIR),
                    "--target-path", str(run_dir / "target"), "--log-path", str(run_dir / "logs"),
                ],
                env=env, cwd=run_dir, stdout=out, stderr=subprocess.STDOUT,
            )  # fmt: skip
            return process, run_dir

        first, first_dir = dbt_run("initial")  # the tables exist: the runs below replace them
        assert first.wait(timeout=900) == 0, (first_dir / "out.log").read_text()[-3000:]

        def history(model: str) -> list:
            return session.sql(f"describe history `{schema}`.`{model}`").collect()

        for round_ in range(self.ROUNDS):
            before = {model: history(model)[0].version for model in REPLACED}
            runs = [dbt_run(f"round{round_}_{writer}") for writer in ("a", "b")]
            for process, run_dir in runs:
                code = process.wait(timeout=1200)
                assert code == 0, (run_dir / "out.log").read_text()[-5000:]
            results = [run_results(run_dir) for _, run_dir in runs]
            overlapped = all(
                execute_window(a[m])[0] < execute_window(b[m])[1]
                and execute_window(b[m])[0] < execute_window(a[m])[1]
                for a, b in [results]
                for m in REPLACED
            )
            for model in REPLACED:
                new = [h for h in history(model) if h.version > before[model]]
                replaces = [h for h in new if h.operation == "CREATE OR REPLACE TABLE AS SELECT"]
                assert len(replaces) == 2, [(h.version, h.operation) for h in new]
            # The SQL model's commits carry the provenance of the invocation that made them:
            # both processes committed, and the rows are the last one's, whole.
            invocations = {r[""]["invocation_id"] for r in results}
            sql_commits = [h for h in history("replaced_sql") if h.version > before["replaced_sql"]]
            committed = {json.loads(h.userMetadata)["dbt_invocation_id"] for h in sql_commits}
            assert committed == invocations
            rows = session.sql(
                f"select id, invocation_id from `{schema}`.`replaced_sql` order by id"
            ).collect()
            last = json.loads(sql_commits[0].userMetadata)["dbt_invocation_id"]
            assert [tuple(r) for r in rows] == [(i, last) for i in range(3)]
            py_rows = session.sql(
                f"select id, n from `{schema}`.`replaced_py` order by n"
            ).collect()
            assert [tuple(r) for r in py_rows] == [(0, n) for n in range(3)]
            retried = sum(
                (run_dir / "out.log").read_text().count("Delta conflict on") for _, run_dir in runs
            )
            RELIABILITY["concurrent whole-table replaces"] += 2 * len(REPLACED)
            RELIABILITY["replaces retried after a conflict"] += retried
            if overlapped:
                break
        assert overlapped, f"the two runs never overlapped in {self.ROUNDS} rounds"
