"""The Thrift endpoint: several dbt processes as clients at once, readers during a build, and
the endpoint going away (stopped, then back; hung)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from python_tests.conftest import (
    PROJECT_DIR,
    RELIABILITY,
    endpoint_env,
    running_test_endpoint,
    seed_row_count,
    unique_schema,
)
from python_tests.integration.conftest import DbtProject
from python_tests.integration.reliability.shared import BUILD, COMPARED, versions

VENV_BIN = Path(sys.executable).parent


@pytest.fixture(scope="class")
def thrift(tmp_path_factory):
    """A Spark Thrift + Connect endpoint of its own (own LAKEHOUSE_HOME and free ports)."""
    with running_test_endpoint(endpoint_env(tmp_path_factory)) as settings:
        yield settings


class ThriftClients:
    """dbt processes on the `thrift` target, all clients of one endpoint."""

    def __init__(self, settings, work: Path, schema: str, bronze: str):
        self.settings, self.work, self.schema, self.bronze = settings, work, schema, bronze

    def env(self, **extra: str) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if k != "SPARKDELTA_KILL_AT"}
        env.update(
            {
                "LAKEHOUSE_TARGET": "thrift",
                "LAKEHOUSE_THRIFT_PORT": str(self.settings.thrift_port),
                "LAKEHOUSE_SPARK_CONNECT_URL": self.settings.connect_url,
                "LAKEHOUSE_SCHEMA": self.schema,
                "LAKEHOUSE_BRONZE_SCHEMA": self.bronze,
                "LAKEHOUSE_THREADS": "1",
                **extra,  # last: a test's own value wins
            }
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


class ThriftReader(threading.Thread):
    """An analyst's client: counts the rows of `tables` over its own Thrift connection (PyHive),
    again and again until stopped; every error and every count is recorded."""

    def __init__(self, settings, tables: list[str]):
        super().__init__(daemon=True)
        self.settings, self.tables = settings, tables
        self.counts: dict[str, list[int]] = {table: [] for table in tables}
        self.errors: list[str] = []
        self.stopped = threading.Event()

    def run(self) -> None:
        from pyhive import hive

        connection = hive.connect(host="localhost", port=self.settings.thrift_port, username="r")
        try:
            cursor = connection.cursor()
            while not self.stopped.is_set():
                for table in self.tables:
                    try:
                        cursor.execute(f"select count(*) from {table}")
                        self.counts[table].append(cursor.fetchall()[0][0])
                    except Exception as exc:  # noqa: BLE001 - recorded, the test asserts none
                        self.errors.append(f"{table}: {exc}")
                time.sleep(0.05)
        finally:
            connection.close()

    def __enter__(self) -> ThriftReader:
        self.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stopped.set()
        self.join(timeout=120)


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
    def test_readers_never_see_a_seed_vanish_or_empty(self, thrift, clients):
        """Seeds replaced in one Delta commit on `thrift`, by a `dbt build` (rows through the
        Connect session's global view) and by a `dbt seed` without Spark Connect (rows as one
        VALUES statement of bound parameters): a reader counting them through Thrift the whole
        time never fails and never finds one missing or empty, and each load adds exactly one
        commit, CREATE OR REPLACE TABLE AS SELECT, naming its dbt node."""
        project, dbt = clients
        seeds = {name: seed_row_count(name) for name in ("order_statuses", "country_codes")}
        before = versions(project, seeds)
        tables = {project.relation(name): name for name in seeds}
        with ThriftReader(thrift, list(tables)) as reader:
            assert dbt.run("build_read", *BUILD) == 0, dbt.output("build_read")
            code = dbt.run("seed_values", "seed", LAKEHOUSE_SPARK_CONNECT_URL="")
            assert code == 0, dbt.output("seed_values")
        assert reader.errors == []
        for table, counts in reader.counts.items():
            assert counts and set(counts) == {seeds[tables[table]]}, (table, sorted(set(counts)))
        for name in seeds:
            loads = [row for row in project.history(name) if row.version > before[name]]
            assert [row.operation for row in loads] == ["CREATE OR REPLACE TABLE AS SELECT"] * 2
            assert all(json.loads(row.userMetadata)["dbt_node"] == f"seed.lakehouse.{name}"
                       for row in loads)  # fmt: skip
            assert project.count(name) == seeds[name]
        reads = sum(len(counts) for counts in reader.counts.values())
        print(f"  {reads} reads of the seeds during a build and a seed, none failed or empty")
        RELIABILITY["seed reads during builds, none failed or empty"] += reads

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
