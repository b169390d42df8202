"""Reliability and safety end to end: concurrent writers, crashes, idempotency, bad input,
dangerous operations, endpoint faults and secrets. Every class asserts on the tables (rows,
versions, history) that nothing was lost or duplicated, and adds what it exercised to the
`reliability exercised:` line at the end of the run (also target/reliability.json).

How the concurrency is made honest: Delta's optimistic concurrency is per table log, not per
process, so writers are threads of the pytest JVM sharing its SparkSession (each statement its
own Delta transaction, the same conflict detection as across processes) and, in the endpoint
class, separate `dbt` processes that are clients of one Spark Thrift endpoint. Crashes are
separate processes (their own JVM and LAKEHOUSE_HOME: Derby admits one process per home) that
SIGKILL themselves and their JVM at named points (the adapter's faults.py).
"""

from __future__ import annotations

import json
import logging
import os
import random
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from deltalake import DeltaTable

from dbt.adapters.sparkdelta import retry
from lakehouse.delta.log import DeltaLog
from python_tests.conftest import PROJECT_DIR, RELIABILITY, unique_schema
from python_tests.integration.conftest import DbtProject
from python_tests.shop_reference import (
    COLUMNS,
    KEYS,
    expected_tables,
    order_statuses,
    sorted_rows,
    utc,
)

VENV_BIN = Path(sys.executable).parent
# Commands run with the crash points of SPARKDELTA_KILL_AT (python_tests/fault_injection.py).
WITH_FAULTS = [sys.executable, "-m", "python_tests.fault_injection"]


def model_sql(config: str, sql: str) -> str:
    return f"{{{{ config({config}) }}}}\n{sql}\n"


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


# --------------------------------------------------------------------------------------------
# Concurrent writers: threads of one JVM, each statement its own Delta transaction.
# --------------------------------------------------------------------------------------------


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


# --------------------------------------------------------------------------------------------
# Idempotency and bad input.
# --------------------------------------------------------------------------------------------

BUILD = ("build", "--exclude", "resource_type:test", "resource_type:unit_test")
COMPARED = {
    "fct_orders": "order_id",
    "fct_customer_revenue": "customer_id",
    "fct_order_lines": "order_line_id",
    "int_orders_deduplicated": "order_id",
    "int_order_lines_deduplicated": "order_line_id",
    "int_shop_rows_quarantined": "quarantine_id",
}
BRONZE = ("customers", "orders", "order_lines", "products", "payments")


def versions(project: DbtProject, names) -> dict[str, int]:
    return {name: project.history(name)[0].version for name in names}


@pytest.mark.slow
class TestIdempotency:
    def test_same_batch_twice_gives_the_same_tables(self, dbt_project):
        p = dbt_project
        p.load_bronze(through=1)
        p.dbt(*BUILD)
        bronze_before = {
            t: p.rows(f"describe history `{p.bronze_schema}`.`{t}`")[0].version for t in BRONZE
        }
        rows_before = {
            t: p.rows(f"select * from {p.relation(t)} order by {k}") for t, k in COMPARED.items()
        }
        p.load_bronze(through=1)  # the same batches again: Delta skips them (txnAppId)
        bronze_after = {
            t: p.rows(f"describe history `{p.bronze_schema}`.`{t}`")[0].version for t in BRONZE
        }
        assert bronze_after == bronze_before, "a repeated batch made a commit"
        p.dbt(*BUILD)
        for table, key in COMPARED.items():
            assert (
                p.rows(f"select * from {p.relation(table)} order by {key}") == (rows_before[table])
            ), table
        # Good rows loaded, bad rows quarantined (two per change batch), none lost.
        assert p.count("int_shop_rows_quarantined") == 2
        RELIABILITY["idempotent reruns"] += 2
        RELIABILITY["rows checked, none lost or duplicated"] += sum(map(len, rows_before.values()))


def failed_message(result) -> str:
    return " ".join(str(r.message) for r in result.result if r.status in ("error", "fail"))


class TestBadInput:
    """Each bad input fails the write with the model, the constraint or column and an example
    value named, and leaves the target's version unchanged."""

    def checked_model(self, p, name: str) -> None:
        p.write(
            f"models/{name}.yml",
            f"""
version: 2
models:
  - name: {name}
    constraints:
      - type: check
        name: amount_positive
        expression: "amount > 0"
    columns:
      - name: id
        constraints:
          - type: not_null
""",
        )
        p.model(name, model_sql("unique_key='id'", GOOD_ROWS))
        p.dbt("run", "-s", name)

    @pytest.mark.parametrize(
        ("case", "rows", "named"),
        [
            ("not_null", "select cast(null as int) as id, 'x' as name, 5 as amount",
             ["id_not_null", "id : null"]),
            ("check", "select 7 as id, 'x' as name, -5 as amount",
             ["amount_positive", "amount : -5"]),
            ("wrong_type", "select 'seven' as id, 'x' as name, 5 as amount",
             ["CAST_INVALID_INPUT", "'seven'", "column(s) id"]),
        ],
    )  # fmt: skip
    def test_constraint_and_type_violations(self, scratch_project, case, rows, named):
        p = scratch_project
        name = f"bad_{case}"
        self.checked_model(p, name)
        before = versions(p, [name])
        p.model(name, model_sql("unique_key='id'", rows))
        result = p.dbt("run", "-s", name, expect_success=False)
        message = failed_message(result)
        assert name in str(result.result[0].node.unique_id)
        for text in named:
            assert text in message, f"{text!r} not in {message!r}"
        assert versions(p, [name]) == before
        assert p.count(name) == 3
        RELIABILITY["bad inputs rejected"] += 1

    def test_schema_drift_in_a_source_names_the_column(self, scratch_project):
        p = scratch_project
        p.write(
            "models/_sources.yml",
            f"""
version: 2
sources:
  - name: landing
    schema: "{p.schema}"
    tables:
      - name: drifting
""",
        )
        p.spark.sql(f"create schema if not exists `{p.schema}`")
        p.spark.sql(
            f"create or replace table {p.relation('drifting')} (id int, amount int) using delta"
        )
        p.spark.sql(f"insert into {p.relation('drifting')} values (1, 10), (2, 20)")
        p.model(
            "from_drifting",
            model_sql(
                "unique_key='id', on_schema_change='fail'",
                "select id, amount from {{ source('landing', 'drifting') }}",
            ),
        )
        p.dbt("run", "-s", "from_drifting")
        before = versions(p, ["from_drifting"])
        # The source renames a column and changes a type under the model.
        p.spark.sql(
            f"create or replace table {p.relation('drifting')} (id int, amount_eur string) "
            "using delta"
        )
        p.spark.sql(f"insert into {p.relation('drifting')} values (3, 'thirty')")
        result = p.dbt("run", "-s", "from_drifting", expect_success=False)
        message = failed_message(result)
        assert "from_drifting" in result.result[0].node.unique_id
        assert "amount" in message and "amount_eur" in message, message
        assert versions(p, ["from_drifting"]) == before
        assert p.count("from_drifting") == 2
        RELIABILITY["bad inputs rejected"] += 1

    @pytest.mark.parametrize(
        ("csv", "named"),
        [
            # A ragged row: dbt's CSV reader names the seed and the row.
            ("code,amount\na,1\nb,2\nc,3,extra\n", ["bad_seed", "Row 2 has 3 values"]),
            # A value that is not of the column's type (dbt-spark's loader, ANSI off, would
            # load NULL): the adapter checks every value first.
            ("code,amount\na,1\nb,two\n", ["bad_seed", "row 2", "column amount", "'two'"]),
        ],
    )
    def test_malformed_seed_file(self, scratch_project, csv, named):
        p = scratch_project
        p.write("seeds/bad_seed.csv", "code,amount\na,1\nb,2\n")
        p.write(
            "seeds/_seeds.yml",
            """
version: 2
seeds:
  - name: bad_seed
    config:
      column_types: {code: string, amount: int}
""",
        )
        p.dbt("seed", "-s", "bad_seed", "--full-refresh")
        before = versions(p, ["bad_seed"])
        good = p.rows(f"select * from {p.relation('bad_seed')} order by code")
        p.write("seeds/bad_seed.csv", csv)
        result = p.dbt("seed", "-s", "bad_seed", expect_success=False)
        message = failed_message(result) + str(result.exception or "")
        for text in named:
            assert text in message, f"{text!r} not in {message!r}"
        assert versions(p, ["bad_seed"]) == before
        assert p.rows(f"select * from {p.relation('bad_seed')} order by code") == good
        RELIABILITY["bad inputs rejected"] += 1


GOOD_ROWS = "select * from values (1, 'a', 10), (2, 'b', 20), (3, 'c', 30) as t(id, name, amount)"


# --------------------------------------------------------------------------------------------
# Crashes: `lakehouse load`, `dbt build` and `dbt run-operation optimize_tables` in their own
# processes, SIGKILLed (with their JVM) at named points, then rerun.
# --------------------------------------------------------------------------------------------

# (kill point, command, the table the killed statement writes, what the kill leaves it at,
# the change batch landed before). dbt runs nodes generation by generation, so each point is
# reached before its table has taken in the batch; a point not reached fails the test.
KILL_POINTS = [
    ("after:bronze_1.orders", "load", None, None, 0),  # between two bronze appends of a batch
    ("during:int_orders_deduplicated:merge", "build", "int_orders_deduplicated", "unchanged", 1),
    # The change-feed consumer commits its rows and its watermark as one commit; killed right
    # after it, before dbt records the run: the rerun must not apply the changes again.
    ("after:fct_order_lines:merge", "build", "fct_order_lines", "advanced", 1),
    ("during:fct_orders:create or replace table", "build", "fct_orders", "unchanged", 1),
    ("during:*:optimize", "optimize", "int_order_lines_deduplicated", "unchanged", 1),
    ("during:snap_customers:merge", "build", "snap_customers", "unchanged", 2),
]
CURRENT_CUSTOMERS = (
    "select customer_id, full_name, email, country_code, country_name "
    "from {} where is_current order by customer_id"
)


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


class CrashedLakehouse:
    """The project in subprocesses with their own LAKEHOUSE_HOME, read by path from here."""

    def __init__(self, home: Path, work: Path, spark):
        self.home, self.work, self.spark = home, work, spark
        self.schema, self.bronze = "crash", "crash_bronze"
        self.log = work / "subprocesses.log"

    def env(self, kill_at: str | None) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if k != "SPARKDELTA_KILL_AT"}
        env.update(
            LAKEHOUSE_HOME=str(self.home),
            LAKEHOUSE_SCHEMA=self.schema,
            LAKEHOUSE_BRONZE_SCHEMA=self.bronze,
            LAKEHOUSE_TARGET="local",
            LAKEHOUSE_DRIVER_MEMORY="1g",
            LAKEHOUSE_THREADS="1",
            PYTHONPATH=str(PROJECT_DIR),
        )
        if kill_at:
            env["SPARKDELTA_KILL_AT"] = kill_at
        return env

    def command(self, what: str, through: int = 1) -> list[str]:
        dbt_paths = [
            "--project-dir", str(PROJECT_DIR), "--profiles-dir", str(PROJECT_DIR),
            "--target-path", str(self.work / "target"), "--log-path", str(self.work / "logs"),
        ]  # fmt: skip
        if what == "load":
            return [
                *WITH_FAULTS, "lakehouse", "--project-dir", str(PROJECT_DIR),
                "--bronze-schema", self.bronze, "--orders", "200", "--seed", "7",
                "load", "--through", str(through),
            ]  # fmt: skip
        if what == "optimize":
            models = ["int_orders_deduplicated", "int_order_lines_deduplicated"]
            args = json.dumps({"models": models})
            return [
                *WITH_FAULTS,
                "dbt",
                "run-operation",
                "optimize_tables",
                "--args",
                args,
                *dbt_paths,
            ]
        return [*WITH_FAULTS, "dbt", *BUILD, *dbt_paths]

    def run(self, what: str, through: int = 1, kill_at: str | None = None) -> None:
        with open(self.log, "a") as log:
            log.write(f"\n===== {what} through={through} kill_at={kill_at}\n")
            log.flush()
            started = time.monotonic()
            proc = subprocess.run(
                self.command(what, through), env=self.env(kill_at), cwd=self.work,
                stdout=log, stderr=subprocess.STDOUT, timeout=1500,
            )  # fmt: skip
            log.write(f"===== rc={proc.returncode} in {time.monotonic() - started:.0f}s\n")
        tail = self.log.read_text()[-3000:]
        if kill_at:
            assert proc.returncode == -9, f"{kill_at} not reached (rc {proc.returncode}): {tail}"
        else:
            assert proc.returncode == 0, f"{what} failed (rc {proc.returncode}): {tail}"

    def run_killed_after(self, what: str, seconds: float) -> bool:
        """Start `what`, SIGKILL its whole process group (dbt and its JVM) after `seconds`;
        whether it was still running then."""
        with open(self.log, "a") as log:
            log.write(f"\n===== {what}, kill -9 after {seconds:.1f}s\n")
            log.flush()
            proc = subprocess.Popen(
                self.command(what), env=self.env(None), cwd=self.work,
                stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
            )  # fmt: skip
            try:
                proc.wait(timeout=seconds)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
                return True
            tail = self.log.read_text()[-3000:]
            assert proc.returncode == 0, f"{what} failed before the kill: {tail}"
            return False

    def tables(self) -> dict[str, Path]:
        warehouse = self.home / "warehouse"
        return {
            f"{log.parent.parent.name.removesuffix('.db')}.{log.parent.name}": log.parent
            for log in warehouse.glob("*.db/*/_delta_log")
        }

    def check_committed(self) -> dict[str, int]:
        """Every Delta table is at a committed version: the log reconstructs, every file of
        that version exists, Spark reads it and DESCRIBE HISTORY ends at the same version."""
        versions = {}
        for name, path in self.tables().items():
            snapshot = DeltaLog(str(path)).snapshot()
            missing = [p for p, _ in snapshot.files if not (path / p).exists()]
            assert not missing, f"{name} v{snapshot.version}: files missing {missing[:3]}"
            history = self.spark.sql(f"describe history delta.`{path}`").collect()
            assert history[0].version == snapshot.version, name
            assert [h.version for h in history] == list(range(snapshot.version, -1, -1)), name
            self.spark.read.format("delta").load(str(path)).count()
            versions[name] = snapshot.version
        return versions

    def rows(self, table: str, sql: str = "select * from {} order by {}", key: str = "") -> list:
        path = self.tables()[f"{self.schema}.{table}"]
        return self.spark.sql(sql.format(f"delta.`{path}`", key)).collect()


@pytest.fixture(scope="module")
def reference(delta_spark, tmp_path_factory):
    """The uninterrupted run: batches 0, 1 and 2 built one by one (in the pytest JVM)."""
    project = DbtProject(
        spark=delta_spark,
        schema=unique_schema("uninterrupted"),
        bronze_schema=unique_schema("uninterrupted_bronze"),
        work_dir=tmp_path_factory.mktemp("uninterrupted"),
    )
    for batch in (0, 1, 2):
        project.load_bronze(through=batch)
        project.dbt(*BUILD)
    return project


@pytest.mark.slow
class TestCrashes:
    def test_killed_at_every_point_then_rerun_equals_an_uninterrupted_run(
        self, delta_spark, reference, tmp_path_factory
    ):
        lakehouse = CrashedLakehouse(
            tmp_path_factory.mktemp("crash_home"), tmp_path_factory.mktemp("crash"), delta_spark
        )
        lakehouse.run("load", through=0)
        lakehouse.run("build")
        landed = 0
        for kill_at, what, table, effect, batch in KILL_POINTS:
            if batch > landed:
                lakehouse.run("load", through=batch)
                landed = batch
            before = lakehouse.check_committed()
            lakehouse.run(what, through=landed + (what == "load"), kill_at=kill_at)
            after = lakehouse.check_committed()  # every table at a committed version
            if table:
                name = f"{lakehouse.schema}.{table}"
                if effect == "unchanged":
                    assert after[name] == before[name], f"{kill_at}: {name} committed"
                else:
                    assert after[name] == before[name] + 1, f"{kill_at}: {name} not committed"
            if what == "load":
                landed += 1
                lakehouse.run("load", through=landed)  # the rerun of the killed load
            RELIABILITY["kill points"] += 1
        lakehouse.run("build")
        lakehouse.check_committed()

        checked = 0
        for name, key in COMPARED.items():
            got = lakehouse.rows(name, key=key)
            expected = reference.rows(f"select * from {reference.relation(name)} order by {key}")
            assert got == expected, f"{name}: rerun after the crashes differs"
            checked += len(expected)
        got = lakehouse.rows("dim_customers", CURRENT_CUSTOMERS)
        assert got == reference.rows(CURRENT_CUSTOMERS.format(reference.relation("dim_customers")))
        snapshot_rows = "select customer_id, count(*) as n from {} group by 1 order by 1"
        assert lakehouse.rows("snap_customers", snapshot_rows) == reference.rows(
            snapshot_rows.format(reference.relation("snap_customers"))
        ), "a killed snapshot left extra or missing versions"
        for table in BRONZE:
            per_batch = "select _batch_id, count(*) as n from {} group by 1 order by 1"
            path = lakehouse.tables()[f"{lakehouse.bronze}.{table}"]
            assert delta_spark.sql(per_batch.format(f"delta.`{path}`")).collect() == (
                reference.rows(per_batch.format(f"`{reference.bronze_schema}`.`{table}`"))
            ), f"bronze {table}: a batch lost or duplicated"
        RELIABILITY["rows checked, none lost or duplicated"] += checked


@pytest.mark.slow
class TestRandomKills:
    """kill -9 of the whole `dbt build` process group at random moments (not only at named
    points), then a rerun: every compared table equals the independent recompute over the
    bronze rows, read through delta-rs. LAKEHOUSE_KILL_SEED replays a sequence."""

    def test_killed_at_random_moments_then_rerun_equals_the_recompute(
        self, delta_spark, tmp_path_factory
    ):
        seed = int(os.environ.get("LAKEHOUSE_KILL_SEED", "20261124"))
        rng = random.Random(seed)
        lakehouse = CrashedLakehouse(
            tmp_path_factory.mktemp("kill_home"), tmp_path_factory.mktemp("kill"), delta_spark
        )
        lakehouse.run("load", through=0)
        started = time.monotonic()
        lakehouse.run("build")
        build_seconds = time.monotonic() - started
        killed = 0
        for batch in range(1, 5):
            lakehouse.run("load", through=batch)
            moment = rng.uniform(10, build_seconds)
            killed += lakehouse.run_killed_after("build", moment)
            lakehouse.check_committed()
            lakehouse.run("build")
            bronze = {
                table: DeltaTable(str(lakehouse.tables()[f"{lakehouse.bronze}.{table}"]))
                .to_pyarrow_table()
                .to_pylist()
                for table in KEYS
            }
            expected = expected_tables(bronze, order_statuses())
            for name, columns in COLUMNS.items():
                got = sorted_rows(
                    tuple(utc(v) for v in row)
                    for row in lakehouse.rows(name, f"select {columns} from {{}}")
                )
                assert got == expected[name], (
                    f"seed {seed}, batch {batch}, killed after {moment:.1f}s: {name} differs"
                )
                RELIABILITY["rows checked, none lost or duplicated"] += len(got)
        RELIABILITY["random kills"] += killed
        assert killed >= 3, f"seed {seed}: only {killed} of 4 builds were still running at the kill"


# --------------------------------------------------------------------------------------------
# Dangerous operations and injection.
# --------------------------------------------------------------------------------------------


def run_operation(project: DbtProject, name: str, args: dict) -> tuple[bool, str]:
    """(success, everything dbt said: log lines and the error) of one run-operation."""
    outcome = project.run_operation(name, args)
    return outcome.success, outcome.said


INJECTIONS = [
    ("optimize_tables", {"models": ["guarded; drop table guarded"]}),
    ("optimize_tables", {"schema": "x`; drop table guarded; --"}),
    ("optimize_tables", {"pattern": "guarded' or '1'='1"}),
    ("optimize_tables", {"pattern": "guarded /* comment */"}),
    ("optimize_tables", {"pattern": "guarded", "zorder_by": ["id) -- "]}),
    ("optimize_tables", {"pattern": "guarded", "where": {"p = p or 1=1 /*": "a"}}),
    ("vacuum", {"pattern": "guarded", "retain_hours": "0; drop table guarded"}),
    ("vacuum", {"pattern": "`guarded`"}),
    ("restore", {"table": "guarded`; drop table guarded", "version": 0}),
    ("restore", {"table": "t; drop table x", "version": 0}),
    ("restore", {"table": "guarded", "version": "0; drop table guarded"}),
    ("restore", {"table": "guarded -- ", "version": 0}),
    ("clone", {"source": "guarded", "target": "x; drop table guarded"}),
    ("clone", {"source": "guarded", "target": "y", "timestamp": "2026' --"}),
    ("clone", {"source": 'guarded"; drop table guarded', "target": "y"}),
    ("drop_table_feature", {"feature": "x; drop table guarded", "pattern": "*"}),
    ("enable_table_feature", {"feature": "v2Checkpoint'); drop table guarded; --", "pattern": "*"}),
]


@pytest.fixture(scope="class")
def guarded(dbt_project):
    """A Delta table with history, a rewritten version and a table feature, in the schema of
    the project whose operations are tried on it."""
    p = dbt_project
    p.spark.sql(f"create schema if not exists `{p.schema}`")
    table = p.relation("guarded")
    p.spark.sql(f"create or replace table {table} (id int, p string) using delta")
    for batch in range(3):
        p.spark.sql(f"insert into {table} values ({batch}, 'a'), ({batch + 10}, 'b')")
    p.spark.sql(f"insert overwrite {table} values (100, 'a')")
    p.spark.sql(
        f"alter table {table} set tblproperties ('delta.feature.v2Checkpoint' = 'supported')"
    )
    p.spark.sql(f"create or replace table {p.relation('guarded_copy')} (id int) using delta")
    p.spark.sql(f"insert into {p.relation('guarded_copy')} values (1)")
    return p


@pytest.mark.slow
class TestDangerousOperations:
    def state(self, p) -> tuple:
        detail = p.detail("guarded")
        return (p.history("guarded")[0].version, p.count("guarded"), detail.numFiles,
                tuple(detail.tableFeatures), p.count("guarded_copy"))  # fmt: skip

    @pytest.mark.parametrize(
        ("name", "args", "refused", "says"),
        [
            # VACUUM below the retention: refused outright without the override.
            ("vacuum", {"pattern": "guarded", "retain_hours": 0, "dry_run": False}, True,
             ["delta.deletedFileRetentionDuration"]),
            # VACUUM, RESTORE, DROP FEATURE: dry runs that say what they would do.
            ("vacuum", {"pattern": "guarded", "retain_hours": 0,
                        "unsafe_allow_short_retention": True}, False, ["would delete"]),
            ("restore", {"table": "guarded", "version": 1}, False,
             ["would be undone", "confirm: true"]),
            ("drop_table_feature", {"feature": "v2Checkpoint", "pattern": "guarded"}, False,
             ["would run", "DROP FEATURE"]),
            # Clone over an existing table: refused without replace: true.
            ("clone", {"source": "guarded", "target": "guarded_copy"}, True,
             ["replace: true would"]),
        ],
    )  # fmt: skip
    def test_refused_or_dry_run_without_the_explicit_argument(
        self, guarded, name, args, refused, says
    ):
        before = self.state(guarded)
        success, said = run_operation(guarded, name, args)
        assert success is not refused, said
        for text in says:
            assert text.lower() in said.lower(), f"{text!r} not in {said!r}"
        assert self.state(guarded) == before, f"{name} changed the table without the argument"
        RELIABILITY["dangerous operations guarded"] += 1

    @pytest.mark.parametrize(("name", "args"), INJECTIONS)
    def test_injection_attempts_are_rejected(self, guarded, name, args):
        before = self.state(guarded)
        success, said = run_operation(guarded, name, args)
        assert not success, said
        assert "Invalid" in said, said
        assert self.state(guarded) == before
        RELIABILITY["injection attempts rejected"] += 1


class TestOperationGuards:
    """No operation destroys data it was not asked to, and every refusal names the argument
    and what to do."""

    @pytest.mark.parametrize(
        ("chain", "says"),
        [
            ([], ["the target itself"]),
            (["guarded_clone"], ["a clone of the target", "guarded_clone cloned from"]),
            (
                ["guarded_clone", "guarded_clone_of_clone"],
                [
                    "a clone of the target",
                    "guarded_clone_of_clone cloned from",
                    "guarded_clone cloned from",
                ],
            ),
        ],
    )
    def test_clone_refuses_to_replace_a_table_by_itself_or_its_own_clones(
        self, guarded, chain, says
    ):
        p = guarded
        source = "guarded"
        for clone in chain:  # each a clone of the one before
            p.spark.sql(f"drop table if exists {p.relation(clone)}")
            success, said = run_operation(p, "clone", {"source": source, "target": clone})
            assert success, said
            source = clone
        rows = p.rows(f"select * from {p.relation('guarded')} order by id")
        version = p.history("guarded")[0].version
        success, said = run_operation(
            p, "clone", {"source": source, "target": "guarded", "replace": True}
        )
        assert not success and "restore" in said, said
        assert all(text in said for text in says), said
        assert p.rows(f"select * from {p.relation('guarded')} order by id") == rows
        assert p.history("guarded")[0].version == version, "the target was changed"
        RELIABILITY["dangerous operations guarded"] += 1

    def test_clone_replaces_an_unrelated_table(self, guarded):
        p = guarded
        p.spark.sql(f"create or replace table {p.relation('replaced')} (id int) using delta")
        p.spark.sql(f"insert into {p.relation('replaced')} values (7)")
        success, said = run_operation(
            p, "clone", {"source": "guarded", "target": "replaced", "replace": True}
        )
        assert success, said
        assert p.rows(f"select id from {p.relation('replaced')}") == p.rows(
            f"select id from {p.relation('guarded')}"
        )

    @pytest.mark.parametrize(
        ("name", "args", "says"),
        [
            ("restore", {"table": "guarded", "timestamp": "2026-13-45"},
             ['Invalid restore', 'timestamp "2026-13-45"', "not a date"]),
            ("restore", {"table": "guarded", "timestamp": "2999-01-01"},
             ["after its latest commit", "nothing to restore"]),
            ("restore", {"table": "guarded", "timestamp": "2001-01-01"},
             ["before its oldest version"]),
            ("restore", {"table": "guarded", "version": 1.5},
             ['Invalid restore', 'version "1.5"', "whole number"]),
            ("restore", {"table": "guarded", "version": 99}, ["version 99 is not in its history"]),
            ("history", {"pattern": "guarded", "limit": 1.5},
             ['Invalid history limit "1.5"', "whole number"]),
            ("history", {"pattern": "guarded", "limit": True}, ['Invalid history limit "True"']),
            ("optimize_tables", {"pattern": "guarded", "where": {"p": {"a": 1}}},
             ["Invalid optimize where value for p"]),
            ("optimize_tables", {"tags": ["no_such_tag"]}, ["has the tag no_such_tag"]),
        ],
    )  # fmt: skip
    def test_bad_arguments_are_named(self, guarded, name, args, says):
        version = guarded.history("guarded")[0].version
        success, said = run_operation(guarded, name, args)
        assert not success, said
        for text in says:
            assert text in said, f"{text!r} not in {said!r}"
        assert "VACUUM" not in said and "Runtime Error Runtime Error" not in said, said
        assert guarded.history("guarded")[0].version == version
        RELIABILITY["bad inputs rejected"] += 1

    def test_optimize_where_null_compacts_the_null_partition(self, guarded):
        p = guarded
        table = p.relation("by_day")
        p.spark.sql(f"create or replace table {table} (id int, day string) using delta "
                    "partitioned by (day)")  # fmt: skip
        for i in range(3):
            p.spark.sql(f"insert into {table} values ({i}, null), ({i}, 'd1')")
        success, said = run_operation(
            p, "optimize_tables", {"pattern": "by_day", "where": {"day": None}}
        )
        assert success, said
        optimize = p.history("by_day")[0]
        assert optimize.operation == "OPTIMIZE"
        assert "isnull('day)" in optimize.operationParameters["predicate"]
        files = p.rows(f"select day, count(distinct _metadata.file_path) as n from {table} "
                       "group by day order by day")  # fmt: skip
        assert [(r.day, r.n) for r in files] == [(None, 1), ("d1", 3)]

    def test_optimize_selects_tables_by_tag(self, guarded):
        success, said = run_operation(guarded, "optimize_tables", {"tags": ["silver"]})
        assert success, said
        for model in ("int_orders_deduplicated", "int_order_lines_deduplicated"):
            assert f"{guarded.schema}.{model}" in said, said


# --------------------------------------------------------------------------------------------
# Secrets.
# --------------------------------------------------------------------------------------------

SECRET_PATTERNS = {
    "private key": r"-----BEGIN [A-Z ]*PRIVATE KEY-----",
    "AWS access key": r"\bAKIA[0-9A-Z]{16}\b",
    "GitHub token": r"\bgh[pousr]_[A-Za-z0-9]{30,}\b",
    "Slack token": r"\bxox[abpr]-[A-Za-z0-9-]{10,}",
    "JWT": r"\beyJ[A-Za-z0-9_-]{10,}\.eyJ[A-Za-z0-9_-]{10,}\.",
    "assigned secret": (
        # a literal: `key: value` (YAML, config) or `key="value"` (code; `key=variable` is not one)
        r"(?i)\b(password|passwd|secret|token|api_key|apikey|access_key)\b"
        r"(?::[ \t]*['\"]?|[ \t]*=[ \t]*['\"])"
        r"(?!\{\{|\$\{|env_var|os\.environ|none\b|null\b|<)[A-Za-z0-9+/_\-]{8,}"
    ),
}


def test_no_credentials_in_committed_files():
    files = subprocess.run(
        ["git", "ls-files"], cwd=PROJECT_DIR, capture_output=True, text=True, check=True
    ).stdout.split()
    found = []
    for name in files:
        path = PROJECT_DIR / name
        if not path.is_file() or path.stat().st_size > 2_000_000:
            continue
        text = path.read_text(errors="ignore")
        for what, pattern in SECRET_PATTERNS.items():
            for match in re.finditer(pattern, text):
                found.append(f"{name}: {what}: {match.group(0)[:40]}")
    assert not found, found
    profiles = (PROJECT_DIR / "profiles.yml").read_text()
    for key in ("host", "port", "user", "auth", "password", "token", "schema"):
        for line in re.findall(rf"^\s+{key}:.*$", profiles, re.M):
            assert "env_var(" in line, f"profiles.yml: {line.strip()} is not from the environment"
    RELIABILITY["committed files scanned for credentials"] += len(files)


# --------------------------------------------------------------------------------------------
# The Thrift endpoint: several dbt processes as clients at once, and the endpoint going away.
# --------------------------------------------------------------------------------------------


@pytest.fixture(scope="class")
def thrift(tmp_path_factory):
    """A Spark Thrift + Connect endpoint of its own (own LAKEHOUSE_HOME and free ports)."""
    from python_tests.conftest import endpoint_env, running_test_endpoint

    with running_test_endpoint(endpoint_env(tmp_path_factory)) as settings:
        yield settings


class ThriftClients:
    """dbt processes on the `thrift` target, all clients of one endpoint."""

    def __init__(self, settings, work: Path, schema: str, bronze: str):
        self.settings, self.work, self.schema, self.bronze = settings, work, schema, bronze

    def env(self, **extra: str) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if k != "SPARKDELTA_KILL_AT"}
        env.update(
            LAKEHOUSE_TARGET="thrift",
            LAKEHOUSE_THRIFT_PORT=str(self.settings.thrift_port),
            LAKEHOUSE_SPARK_CONNECT_URL=self.settings.connect_url,
            LAKEHOUSE_SCHEMA=self.schema,
            LAKEHOUSE_BRONZE_SCHEMA=self.bronze,
            LAKEHOUSE_THREADS="1",
            LAKEHOUSE_POLL_INTERVAL="1",
            **extra,
        )
        return env

    def start(self, name: str, *args: str, **env: str) -> subprocess.Popen:
        work = self.work / name
        work.mkdir(exist_ok=True)
        out = open(work / "out.log", "w")  # noqa: SIM115 - closed with the process
        return subprocess.Popen(
            [
                str(VENV_BIN / "dbt"), *args,
                "--project-dir", str(PROJECT_DIR), "--profiles-dir", str(PROJECT_DIR),
                "--target-path", str(work / "target"), "--log-path", str(work / "logs"),
            ],
            env=self.env(**env), cwd=work, stdout=out, stderr=subprocess.STDOUT,
        )  # fmt: skip

    def output(self, name: str) -> str:
        return (self.work / name / "out.log").read_text()

    def run(self, name: str, *args: str, timeout: float = 1200, **env: str) -> int:
        return self.start(name, *args, **env).wait(timeout=timeout)


@pytest.fixture(scope="class")
def clients(thrift, delta_spark, tmp_path_factory):
    from pyspark.sql.connect.session import SparkSession as ConnectSession

    connect = ConnectSession.builder.remote(thrift.connect_url).create()
    project = DbtProject(
        spark=connect,
        schema=unique_schema("clients"),
        bronze_schema=unique_schema("clients_bronze"),
        work_dir=tmp_path_factory.mktemp("clients"),
    )
    project.load_bronze(through=0)
    clients = ThriftClients(thrift, project.work_dir, project.schema, project.bronze_schema)
    assert clients.run("initial", *BUILD) == 0, clients.output("initial")
    yield project, clients
    connect.stop()


@pytest.mark.slow
@pytest.mark.endpoint
class TestThriftClients:
    def test_four_writers_on_overlapping_selections(self, clients, reference):
        """Two `dbt build`s on overlapping selections, a `dbt run` of a MERGE model and an
        OPTIMIZE, at once, as four client processes of one endpoint; then a rerun. Every
        failure must be a named Delta conflict or a constraint that kept bad rows out; the
        final tables equal the uninterrupted run's."""
        project, dbt = clients
        project.load_bronze(through=2)
        writers = {
            "build_orders": ("build", "-s", "+fct_orders", "--exclude", "resource_type:test",
                             "resource_type:unit_test"),
            "build_lines": ("build", "-s", "+fct_order_lines", "+fct_daily_revenue",
                            "--exclude", "resource_type:test", "resource_type:unit_test"),
            "merge_orders": ("run", "-s", "int_orders_deduplicated"),
            "optimize": ("run-operation", "optimize_tables", "--args",
                         json.dumps({"models": ["int_orders_deduplicated",
                                                "int_order_lines_deduplicated"]})),
        }  # fmt: skip
        processes = {name: dbt.start(name, *args) for name, args in writers.items()}
        codes = {name: p.wait(timeout=1500) for name, p in processes.items()}
        for name, code in codes.items():
            if code != 0:
                # A named Delta conflict, or (a model run alone while another process still
                # rebuilds its upstream quarantine) a CHECK constraint naming column and value:
                # either way nothing was committed, and the rerun below converges.
                out = dbt.output(name)
                named_conflict = "Delta table" in out and "concurrent" in out
                constraint = "DELTA_VIOLATE_CONSTRAINT_WITH_VALUES" in out and " : " in out
                assert named_conflict or constraint, f"{name}: {out[-3000:]}"
        assert dbt.run("final", *BUILD) == 0, dbt.output("final")
        for name, key in COMPARED.items():
            got = project.rows(f"select * from {project.relation(name)} order by {key}")
            expected = reference.rows(f"select * from {reference.relation(name)} order by {key}")
            assert [tuple(r) for r in got] == [tuple(r) for r in expected], name
            RELIABILITY["rows checked, none lost or duplicated"] += len(expected)
        RELIABILITY["concurrent writers"] += len(writers)
        RELIABILITY["writer processes failed on a named conflict, then rerun"] += sum(
            1 for code in codes.values() if code != 0
        )

    def test_endpoint_stopped_during_a_run_then_back(self, thrift, clients):
        from lakehouse import endpoint

        project, dbt = clients
        run = dbt.start("interrupted", *BUILD, "--full-refresh", LAKEHOUSE_SOCKET_TIMEOUT="30")
        deadline = time.monotonic() + 600
        log = dbt.work / "interrupted" / "out.log"
        while time.monotonic() < deadline and "START sql" not in log.read_text():
            time.sleep(0.5)
        assert "START sql" in log.read_text(), log.read_text()
        endpoint.stop(thrift)
        stopped_at = time.monotonic()
        code = run.wait(timeout=300)
        took = time.monotonic() - stopped_at
        out = dbt.output("interrupted")
        assert code != 0
        assert "Thrift endpoint" in out, out[-3000:]
        assert took < 120, f"dbt needed {took:.0f}s to give up"
        endpoint.start(thrift, timeout=400)
        rerun = ("run", "-s", "int_orders_deduplicated", "fct_orders")
        assert dbt.run("after_restart", *rerun) == 0, dbt.output("after_restart")
        from pyspark.sql.connect.session import SparkSession as ConnectSession

        fresh = ConnectSession.builder.remote(thrift.connect_url).create()  # the old one died
        try:
            count = f"select count(*) as n from {project.relation('fct_orders')}"
            assert fresh.sql(count).first().n > 0
        finally:
            fresh.stop()
        RELIABILITY["endpoint faults"] += 1

    def test_hung_endpoint_fails_after_the_socket_timeout(self, thrift, clients):
        import signal

        pid = int(thrift.pid_file.read_text())
        os.killpg(pid, signal.SIGSTOP)
        try:
            started = time.monotonic()
            code = clients[1].run(
                "hung", "run", "-s", "stg_shop__orders", timeout=300,
                LAKEHOUSE_SOCKET_TIMEOUT="10",
            )  # fmt: skip
            took = time.monotonic() - started
        finally:
            os.killpg(pid, signal.SIGCONT)
        out = clients[1].output("hung")
        assert code != 0
        assert "Thrift endpoint" in out and "socket_timeout=10" in out, out[-3000:]
        assert took < 120, f"dbt hung for {took:.0f}s"
        assert clients[1].run("unhung", "run", "-s", "stg_shop__orders") == 0
        RELIABILITY["endpoint faults"] += 1
