"""What a stranger does with the two deliverables, nothing of this project installed: the
adapter's wheel alone in a clean virtualenv, `dbt init` answering its prompts, the operations
package added by path to a small project with no `file_format` anywhere (a copy of the
package's integration tests: nothing is written into the repository), `dbt build` twice, the
package's own operation tests (as `make test-ops` runs them, on the profile `dbt init` wrote),
`dbt clone` to another schema, one operation. Each dbt command is a process of its own (its
own Spark JVM), as a user runs them. The tables are read from outside, with delta-rs. The
oldest supported stack: test_oldest_pair.py. `make test-dist`."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from deltalake import DeltaTable

from dbt.adapters.sparkdelta.__version__ import version as adapter_version
from python_tests.conftest import PROJECT_DIR
from python_tests.distribution.strangers import (
    PACKAGE_TESTS,
    SCHEMA,
    TABLES,
    listing,
    make_stranger,
    pinned_stack,
    resolved_delta_jar,
    run,
    versions,
)

pytestmark = pytest.mark.distribution

# A check line per operation, dry run and real run (run_all_operation_tests logs one per check).
OPERATION_CHECKS = [
    "clone_schema cloned the",
    "clone_schema copied no file",
    "clone at version",
    "clone at timestamp",
    "optimize_tables where p = a",
    "optimize_tables zorder_by id",
    "vacuum is a dry run by default",
    "vacuum lite (retain 0 hours)",
    "reorg_purge rewrote the files with deletion vectors",
    "history limit 3 showed 3 entries",
    "detail reported events'",
    "table_health covered every table",
    "enable_table_feature v2Checkpoint",
    "enable_table_feature again: already enabled",
    "drop_table_feature is a dry run by default",
    "drop_table_feature dry_run false",
    "apply_property_policy is a dry run by default",
    "apply_property_policy dry_run false",
    "apply_property_policy again",
    "restore is a dry run until confirmed",
    "restore by timestamp",
    "restore confirm",
    "erase is a dry run by default",
    f"erase: account 1 deleted from {SCHEMA}_ops.erase_with_dv",
    f"erase: account 1 deleted from {SCHEMA}_ops.erase_plain",
    "diff_relations of accounts' version",
    "diff_relations per column",
    "diff_relations save_to",
    "diff_relations of version",
    "diff_relations of a relation that does not exist",
    "diff_relations with fail_on_diff",
    "drop_schema is a dry run by default",
    "drop_schema dry_run false",
]


@pytest.fixture(scope="module")
def source_listing() -> set[str]:
    """The package's integration tests' folder before a stranger copies it."""
    return listing(PACKAGE_TESTS)


@pytest.fixture(scope="module")
def stranger(wheels, source_listing, tmp_path_factory):
    """The stranger on the stack this suite runs on."""
    work = tmp_path_factory.mktemp("stranger")
    return make_stranger(work, wheels["dbt_sparkdelta"], pinned_stack())


@pytest.fixture(scope="module")
def built(stranger):
    venv, project, env = stranger
    dbt = venv / "bin" / "dbt"
    warehouse = project / ".sparkdelta" / "warehouse"
    said = run(dbt, "build", cwd=project, env=env)
    first = versions(warehouse, SCHEMA)
    seed = project / "seeds" / "people.csv"
    seed.write_text(seed.read_text().replace("3,Ada,\n", "3,Ada,math\n"))  # one changed row
    run(dbt, "build", cwd=project, env=env)
    second = versions(warehouse, SCHEMA)
    return dbt, project, env, warehouse, first, second, said


@pytest.fixture(scope="module")
def operated(built) -> dict[str, subprocess.CompletedProcess]:
    """The package's operation tests after the two builds (its checks count from the last
    one), each command's outcome by name: each test below reports its own."""
    dbt, project, env, *_ = built
    commands = {
        "operations": ["run-operation", "run_all_operation_tests"],
        "fail_on_diff": [
            "run-operation", "diff_relations",
            "--args", "{a: accounts, b: raw_accounts, fail_on_diff: true}",
        ],
    }  # fmt: skip
    return {
        name: subprocess.run(
            [str(dbt), *args], cwd=project, env=env, capture_output=True, text=True, timeout=1800
        )
        for name, args in commands.items()
    }


def printed(outcome: subprocess.CompletedProcess) -> str:
    return outcome.stdout + outcome.stderr


class TestStrangerInstall:
    def test_wheels_pass_twine_check(self, wheels):
        out = run(sys.executable, "-m", "twine", "check", *wheels.values(),
                  cwd=PROJECT_DIR, env=dict(os.environ))  # fmt: skip
        assert out.count("PASSED") == 2, out

    def test_only_the_adapter_is_installed(self, stranger):
        venv, project, env = stranger
        listed = run(venv / "bin" / "python", "-m", "pip", "list", "--format=json",
                     cwd=project, env=env)  # fmt: skip
        # PEP 503 names (delta-spark 4.4 calls itself delta_spark)
        names = {package["name"].lower().replace("_", "-") for package in json.loads(listed)}
        assert {"dbt-sparkdelta", "dbt-spark", "pyspark", "delta-spark"} <= names
        assert "delta-lakehouse" not in names
        said = run(venv / "bin" / "dbt", "--version", cwd=project, env=env)
        assert f"sparkdelta: {adapter_version}" in said, said

    def test_dbt_init_wrote_a_sparkdelta_profile(self, stranger):
        _, _, env = stranger
        profile = yaml.safe_load((Path(env["DBT_PROFILES_DIR"]) / "profiles.yml").read_text())
        output = profile["integration_tests"]["outputs"]["dev"]
        assert output == {
            "type": "sparkdelta", "method": "session", "schema": "analytics",
            "session_home": ".sparkdelta", "threads": 1,
        }  # fmt: skip

    def test_every_node_is_delta_and_its_history_grows(self, built):
        *_, first, second, _ = built
        for name in TABLES:
            assert second[name] > first[name], name

    def test_the_time_travel_models_equal_their_expected_rows(self, built):
        first_build = built[-1]
        for test in ("equal_rows_accounts_history_", "equal_rows_accounts_as_of_"):
            assert re.search(rf"PASS {test}", first_build), first_build
        assert re.search(r"Done\. PASS=\d+ WARN=0 ERROR=0 SKIP=0", first_build), first_build

    def test_delta_was_resolved_from_maven_central_into_the_new_home(self, built):
        venv, env = built[1].parent / "venv", built[2]
        assert resolved_delta_jar(Path(env["HOME"]), venv / "bin" / "python").exists()

    def test_seed_values_are_exact_after_the_change(self, built):
        warehouse = built[3]
        rows = DeltaTable(str(warehouse / "analytics.db" / "people")).to_pyarrow_table()
        assert sorted(rows.to_pylist(), key=lambda row: row["id"]) == [
            {"id": 1, "name": "O'Brien", "note": 'say "hi"'},
            {"id": 2, "name": None, "note": "plain"},
            {"id": 3, "name": "Ada", "note": "math"},
        ]
        snapshot = DeltaTable(str(warehouse / "analytics.db" / "people_history"))
        assert snapshot.to_pyarrow_table().num_rows == 4  # Ada's row twice, valid_to set once

    def test_clone_to_another_schema_then_an_operation(self, built, tmp_path):
        dbt, project, env, warehouse, *_ = built
        profiles = Path(env["DBT_PROFILES_DIR"]) / "profiles.yml"
        profile = yaml.safe_load(profiles.read_text())
        outputs = profile["integration_tests"]["outputs"]
        outputs["clone"] = {**outputs["dev"], "schema": "analytics_clone"}
        profiles.write_text(yaml.safe_dump(profile))
        state = tmp_path / "prod_state"
        shutil.copytree(project / "target", state)
        run(dbt, "clone", "--state", state, "--target", "clone", cwd=project, env=env)
        for name in TABLES:
            log = warehouse / "analytics_clone.db" / name / "_delta_log"
            actions = [json.loads(line) for line in
                       (log / "00000000000000000000.json").read_text().splitlines()]  # fmt: skip
            [info] = [action["commitInfo"] for action in actions if "commitInfo" in action]
            assert info["operation"] == "CLONE", name
            assert info["operationParameters"]["source"].endswith(f"analytics.{name}"), name
            # shallow: the clone's files are the source's, by absolute path; nothing copied
            paths = [action["add"]["path"] for action in actions if "add" in action]
            assert paths and all(f"/analytics.db/{name}/" in path for path in paths), name
        said = run(dbt, "run-operation", "table_health", "--args", "{schema: analytics_clone}",
                   "--target", "clone", cwd=project, env=env)  # fmt: skip
        for name in TABLES:
            assert re.search(rf"analytics_clone\.{name}\s+ok\s", said), said

    def test_every_operation_does_what_it_says_on_the_tables(self, operated):
        operations = operated["operations"]
        assert operations.returncode == 0, printed(operations)[-6000:]
        passed = re.findall(r"operation tests: ok  (.*)$", operations.stdout, re.MULTILINE)
        missing = [c for c in OPERATION_CHECKS if not any(line.startswith(c) for line in passed)]
        assert not missing, f"no such check passed: {missing}\n{operations.stdout}"
        [total] = re.findall(r"operation tests: all (\d+) checks passed", operations.stdout)
        assert int(total) == len(passed) >= len(OPERATION_CHECKS)

    def test_fail_on_diff_fails_the_command_on_relations_that_differ(self, operated):
        outcome = operated["fail_on_diff"]
        assert outcome.returncode != 0, printed(outcome)
        assert (
            f"diff_relations: data differs: 1 removed, 1 added, 1 changed (a = {SCHEMA}.accounts, "
            f"b = {SCHEMA}.raw_accounts); fail_on_diff is set."
        ) in printed(outcome)
        assert "Compilation Error" not in printed(outcome)

    def test_nothing_is_written_into_the_repository(self, operated, source_listing):
        assert sorted(listing(PACKAGE_TESTS) - source_listing) == []
