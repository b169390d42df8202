"""The whole project with dbt's threads on every target (`make test-threads`): `dbt build`
(models, snapshots, seeds, data and unit tests) back to back with `threads: 4` on the embedded
`session` target (in this process) and, as `dbt` processes, on the `thrift` and `connect`
targets against one endpoint of the test; Python models run at the same time as each other.
A change batch lands before each of the first builds, so later builds merge changes; the last
tables equal the session target's. And a Python model that raises an exception without a
message fails with its type and traceback on each target.

THREADS_RUNS (default 5) sets the builds per target.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from lakehouse.dbt_runner import environment
from python_tests.conftest import (
    PROJECT_DIR,
    endpoint_env,
    running_test_endpoint,
    unique_schema,
)
from python_tests.integration.conftest import (
    SCRATCH_PROJECT_YML,
    DbtProject,
    ScratchProject,
    overlapping_python_models,
)
from python_tests.integration.reliability.shared import COMPARED

pytestmark = [pytest.mark.slow, pytest.mark.endpoint]

RUNS = int(os.environ.get("THREADS_RUNS", "5"))
THREADS = "4"
LAST_BATCH = 2  # the generator's change batches: 0 (initial), 1 and 2
VENV_BIN = Path(sys.executable).parent
# target -> [seconds per build]; printed at the end of each target's test
TIMES: dict[str, list[float]] = {}
FINAL_ROWS: dict[str, dict[str, list[tuple]]] = {}


@pytest.fixture(scope="module")
def endpoint(tmp_path_factory):
    with running_test_endpoint(endpoint_env(tmp_path_factory)) as settings:
        yield settings


@pytest.fixture(scope="module")
def connect_spark(endpoint):
    """A Spark Connect session of the test on the endpoint: loads bronze, reads the tables."""
    from dbt.adapters.sparkdelta.spark_connect import close_session, open_session

    session = open_session(endpoint.connect_url, 10)
    yield session
    close_session(session)


def remote_env(endpoint, target: str, schema: str, bronze: str) -> dict[str, str]:
    return {
        "LAKEHOUSE_TARGET": target,
        "LAKEHOUSE_THRIFT_PORT": str(endpoint.thrift_port),
        "LAKEHOUSE_SPARK_CONNECT_URL": endpoint.connect_url,
        "LAKEHOUSE_CONNECT_TOKEN": "",
        "LAKEHOUSE_SCHEMA": schema,
        "LAKEHOUSE_BRONZE_SCHEMA": bronze,
    }


def dbt_process(work: Path, env: dict[str, str], *args: str) -> tuple[int, str]:
    """`dbt <args>` as a process of its own, as a user runs it; (exit code, output)."""
    work.mkdir(parents=True, exist_ok=True)
    completed = subprocess.run(
        [
            str(VENV_BIN / "dbt"), *args,
            "--project-dir", str(PROJECT_DIR), "--profiles-dir", str(PROJECT_DIR),
            "--target-path", str(work / "target"), "--log-path", str(work / "logs"),
        ],
        env={**os.environ, **env}, cwd=work, capture_output=True, text=True, timeout=3600,
    )  # fmt: skip
    return completed.returncode, completed.stdout + completed.stderr


@pytest.mark.parametrize("target", ["session", "thrift", "connect"])
def test_back_to_back_builds_with_four_threads(
    target, delta_spark, endpoint, connect_spark, tmp_path_factory
):
    project = DbtProject(
        spark=delta_spark if target == "session" else connect_spark,
        schema=unique_schema(f"threads_{target}"),
        bronze_schema=unique_schema(f"threads_{target}_bronze"),
        work_dir=tmp_path_factory.mktemp(f"threads_{target}"),
    )
    env = {"LAKEHOUSE_THREADS": THREADS}
    if target != "session":
        env.update(remote_env(endpoint, target, project.schema, project.bronze_schema))
    times, overlaps = TIMES.setdefault(target, []), []
    for run in range(RUNS):
        project.load_bronze(through=min(run, LAST_BATCH))
        started = time.monotonic()
        if target == "session":
            with environment(env):
                project.dbt("build")  # raises, naming the failed nodes, unless all is green
            results = project.work_dir / "target" / "run_results.json"
        else:
            work = project.work_dir / f"run{run}"
            code, output = dbt_process(work, env, "build")
            assert code == 0, f"{target} build {run + 1} of {RUNS}:\n{output[-5000:]}"
            results = work / "target" / "run_results.json"
        times.append(time.monotonic() - started)
        overlaps += overlapping_python_models(results)
    print(
        f"\n{target}: {RUNS} green `dbt build`s with threads={THREADS}, seconds each: "
        + ", ".join(f"{t:.0f}" for t in times)
        + f"; Python models that ran at the same time: {sorted(set(overlaps))}"
    )
    assert overlaps, f"no two Python models ran at the same time in {RUNS} builds on {target}"
    FINAL_ROWS[target] = {
        name: [tuple(r) for r in project.rows(f"select * from {project.relation(name)} "
                                              f"order by {key}")]
        for name, key in COMPARED.items()
    }  # fmt: skip
    if target != "session" and "session" in FINAL_ROWS:
        for name in COMPARED:
            assert FINAL_ROWS[target][name] == FINAL_ROWS["session"][name], name


BARE_ASSERTION = """
def model(dbt, spark):
    dbt.config(materialized="table")
    total = 0
    assert total  # fails with an AssertionError that has no message
    return spark.range(1)
"""


@pytest.mark.parametrize("target", ["session", "thrift", "connect"])
def test_a_python_model_failing_without_a_message_shows_type_and_traceback(
    target, delta_spark, endpoint, connect_spark, tmp_path_factory
):
    project_dir = tmp_path_factory.mktemp("bare_assertion")
    (project_dir / "dbt_project.yml").write_text(SCRATCH_PROJECT_YML)
    project = ScratchProject(
        spark=delta_spark if target == "session" else connect_spark,
        schema=unique_schema("bare_assertion"),
        bronze_schema=unique_schema("unused"),
        work_dir=tmp_path_factory.mktemp("dbt_bare_assertion"),
        project_dir=project_dir,
    )
    project.write("models/bare_assertion.py", BARE_ASSERTION)
    env = {} if target == "session" else remote_env(endpoint, target, project.schema, "unused")
    with environment(env):
        result = project.dbt("run", expect_success=False)
    [failed] = project.model_results(result)
    assert failed.status == "error"
    message = failed.message
    assert "Python model model.scratch.bare_assertion failed: AssertionError" in message
    # The traceback's line numbers are those of the compiled code dbt points to.
    [compiled] = (project.work_dir / "target" / "compiled").rglob("bare_assertion.py")
    line = (
        compiled.read_text()
        .splitlines()
        .index("    assert total  # fails with an AssertionError that has no message")
        + 1
    )
    assert f'File "<model.scratch.bare_assertion>", line {line}, in model' in message, message
    assert "assert total  # fails" in message, message
    assert not project.spark.catalog.tableExists(f"{project.schema}.bare_assertion")
