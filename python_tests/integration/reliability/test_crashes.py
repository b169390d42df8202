"""Crashes and reruns: the same batch twice gives the same tables; `lakehouse load`, `dbt
build` and `dbt run-operation optimize_tables` in their own processes, SIGKILLed (with their
JVM) at named points or at random moments, then rerun, equal an uninterrupted run."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from deltalake import DeltaTable

from lakehouse.delta.log import DeltaLog
from python_tests.conftest import PROJECT_DIR, RELIABILITY
from python_tests.integration.reliability.shared import BRONZE, BUILD, COMPARED
from python_tests.shop_reference import (
    COLUMNS,
    KEYS,
    comparable,
    expected_tables,
    sorted_rows,
)

# Commands run with the crash points of SPARKDELTA_KILL_AT (python_tests/fault_injection.py).
WITH_FAULTS = [sys.executable, "-m", "python_tests.fault_injection"]


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
        # Good rows loaded, bad rows quarantined (three per change batch), none lost.
        assert p.count("int_shop_rows_quarantined") == 3
        RELIABILITY["idempotent reruns"] += 2
        RELIABILITY["rows checked, none lost or duplicated"] += sum(map(len, rows_before.values()))


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
            expected = expected_tables(bronze)
            for name, columns in COLUMNS.items():
                got = sorted_rows(
                    comparable(row) for row in lakehouse.rows(name, f"select {columns} from {{}}")
                )
                assert got == expected[name], (
                    f"seed {seed}, batch {batch}, killed after {moment:.1f}s: {name} differs"
                )
                RELIABILITY["rows checked, none lost or duplicated"] += len(got)
        RELIABILITY["random kills"] += killed
        assert killed >= 3, f"seed {seed}: only {killed} of 4 builds were still running at the kill"
