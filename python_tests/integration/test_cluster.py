"""The project on a Spark standalone cluster (`lakehouse cluster`): a master and two 1-core
workers on loopback. The embedded target and the endpoint are pointed at it with
LAKEHOUSE_SPARK_MASTER; the pipeline (`lakehouse run`) must give the tables an independent
recompute gives (python_tests/shop_reference.py, the same reference local mode is held to), and
its tasks must have run on the workers' executors, which got the Delta jars from the driver.

Each `lakehouse run` is its own process (its own driver JVM) with its own LAKEHOUSE_HOME; the
tables are read back by path, through the pytest session's Spark and delta-rs.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from deltalake import DeltaTable

from dbt.adapters.sparkdelta.session import delta_coordinates, ivy_jar_name
from lakehouse import cluster
from lakehouse.dbt_runner import environment
from python_tests.conftest import PROJECT_DIR, endpoint_env, free_port, running_test_endpoint
from python_tests.integration.conftest import jvm_log_lines
from python_tests.shop_reference import (
    COLUMNS,
    KEYS,
    comparable,
    expected_tables,
    sorted_rows,
)

pytestmark = pytest.mark.cluster
SCHEMA, BRONZE = "lakehouse", "bronze"
# The delta-spark jar as Spark's Ivy names it; executors fetch it from the driver by that name.
DELTA_JAR = ivy_jar_name(delta_coordinates()[0])


@pytest.fixture(scope="module")
def running_cluster(tmp_path_factory):
    env = {
        "LAKEHOUSE_HOME": str(tmp_path_factory.mktemp("cluster_home")),
        "LAKEHOUSE_CLUSTER_PORT": str(free_port()),
        "LAKEHOUSE_CLUSTER_UI_PORT": str(free_port()),
        "LAKEHOUSE_WORKER_MEMORY": "2g",
    }
    with environment(env):
        settings = cluster.ClusterSettings.from_env()
    print(f"\ncluster {cluster.start(settings)}")
    yield settings
    print(f"\ncluster {cluster.stop(settings)}")


def run_lakehouse(home: Path, extra_env: dict[str, str]) -> subprocess.CompletedProcess:
    """`lakehouse run` in its own process (its own driver JVM) with its own home."""
    env = {
        **os.environ,
        "LAKEHOUSE_HOME": str(home),
        "LAKEHOUSE_SCHEMA": SCHEMA,
        "LAKEHOUSE_BRONZE_SCHEMA": BRONZE,
        "LAKEHOUSE_DRIVER_MEMORY": "1g",
        **extra_env,
    }
    command = [sys.executable, "-m", "lakehouse.cli", "--project-dir", str(PROJECT_DIR), "run"]
    result = subprocess.run(command, env=env, capture_output=True, text=True, timeout=1800)
    assert result.returncode == 0, f"lakehouse run failed:\n{result.stdout[-3000:]}"
    return result


def assert_quiet_first_run(result: subprocess.CompletedProcess, home: Path) -> None:
    """What a new user's first `lakehouse run` in a new home shows: dbt's summary and the
    Delta report, no JVM log line; and the production manifest the analyst's loop looks for."""
    assert "Completed successfully" in result.stdout
    assert "Delta at work" in result.stdout
    assert (home / "prod-state" / "manifest.json").is_file()
    assert jvm_log_lines(result) == []


def table_path(warehouse: Path, schema: str, table: str) -> Path:
    path = warehouse / f"{schema}.db" / table
    assert (path / "_delta_log").is_dir(), f"{schema}.{table}: no Delta table at {path}"
    return path


def assert_tables_match_the_reference(spark, warehouse: Path) -> dict[str, int]:
    """Each compared table equals the independent recompute; their row counts."""
    bronze = {
        table: DeltaTable(str(table_path(warehouse, BRONZE, table))).to_pyarrow_table().to_pylist()
        for table in KEYS
    }
    expected = expected_tables(bronze)
    counts = {}
    for name, columns in COLUMNS.items():
        location = table_path(warehouse, SCHEMA, name)
        query = f"select {columns} from delta.`{location}`"
        rows = spark.sql(query).collect()
        actual = sorted_rows(comparable(row) for row in rows)
        assert actual == expected[name], f"{name} differs from the reference recompute"
        print(f"  {name}: {len(actual)} rows = reference")
        counts[name] = len(actual)
    return counts


def executor_logs(settings: cluster.ClusterSettings, app_id: str) -> list[str]:
    """The stderr of every executor the workers ran for `app_id`."""
    return [
        log.read_text(errors="replace")
        for log in sorted(settings.directory.glob(f"worker-*/{app_id}/*/stderr"))
    ]


def applications(settings: cluster.ClusterSettings, name: str) -> list[dict]:
    status = cluster.master_status(settings)
    assert status is not None, "the master stopped answering"
    everything = status.get("activeapps", []) + status.get("completedapps", [])
    return [app for app in everything if app.get("name") == name]


def assert_executors_ran_tasks_with_delta(settings: cluster.ClusterSettings, app: dict) -> None:
    logs = executor_logs(settings, app["id"])
    assert logs, f"no executor of {app['id']} ran on the workers"
    assert any("Running task" in log for log in logs), "no task ran on an executor"
    # The driver serves the jars it resolved by Maven coordinates; executors fetch them.
    assert any(DELTA_JAR in log for log in logs), f"executors lack Delta's jar {DELTA_JAR}"
    tasks = sum(log.count("Running task") for log in logs)
    print(f"  {app['id']}: {len(logs)} executor(s) ran {tasks} tasks, Delta jars fetched")


def test_the_workers_register_on_loopback(running_cluster):
    status = cluster.master_status(running_cluster)
    assert status["status"] == "ALIVE"
    assert [w["state"] for w in status["workers"]] == ["ALIVE", "ALIVE"]
    assert {w["host"] for w in status["workers"]} == {"127.0.0.1"}
    assert status["cores"] == 2
    healthy, line = cluster.status(running_cluster)
    assert healthy, line


def test_the_embedded_pipeline_runs_on_the_executors(running_cluster, delta_spark, tmp_path):
    home = tmp_path / "embedded"
    run_lakehouse(home, {"LAKEHOUSE_SPARK_MASTER": running_cluster.master_url})
    (app,) = applications(running_cluster, "sparkdelta")
    assert_executors_ran_tasks_with_delta(running_cluster, app)
    assert_tables_match_the_reference(delta_spark, home / "warehouse")


def test_the_endpoint_runs_on_the_cluster(running_cluster, delta_spark, tmp_path, tmp_path_factory):
    """The thrift target on a cluster: bronze landed over Spark Connect, `dbt build` over
    Thrift, Python models over Spark Connect; every query runs on the executors."""
    home = tmp_path / "endpoint"
    env = endpoint_env(
        tmp_path_factory,
        memory="1g",
        home=home,
        LAKEHOUSE_SPARK_MASTER=running_cluster.master_url,
    )
    with running_test_endpoint(env, timeout=300) as settings:
        run_lakehouse(
            home,
            {
                **env,
                "LAKEHOUSE_TARGET": "thrift",
                "LAKEHOUSE_SPARK_CONNECT_URL": settings.connect_url,
            },
        )
        (app,) = applications(running_cluster, "lakehouse-endpoint")
        assert app["state"] == "RUNNING"
        assert_executors_ran_tasks_with_delta(running_cluster, app)
    assert_tables_match_the_reference(delta_spark, home / "warehouse")
