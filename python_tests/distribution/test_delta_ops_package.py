"""delta_ops' own integration tests (delta_ops/integration_tests), run as `make test-ops` runs
them, from a temporary copy of the folder on its own bare `type: sparkdelta` profile (nothing
is written into the repository): `dbt deps`; one `dbt build`, whose data tests compare the
models of the time-travel macros with seeds of expected rows; `dbt run-operation
run_all_operation_tests`, where every operation runs (dry run, then for real) and each effect
is checked on the tables inside dbt, the first mismatch failing the command; and
diff_relations with fail_on_diff failing the command on relations that differ. Each dbt command
is a process of its own (its own Spark JVM), as a user runs them."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from python_tests.conftest import PROJECT_DIR

pytestmark = pytest.mark.distribution  # make test-dist: the package tested from its own folder

PACKAGE_DIR = PROJECT_DIR / "delta_ops"
SOURCE = PACKAGE_DIR / "integration_tests"
DBT = Path(sys.executable).parent / "dbt"
LEFT_OUT = ("target", "dbt_packages", "logs", "package-lock.yml")
# A check line per operation, dry run and real run (run_all_operation_tests logs one per check).
CHECKS = [
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
    "erase: account 1 deleted from delta_ops_it_ops.erase_with_dv",
    "erase: account 1 deleted from delta_ops_it_ops.erase_plain",
    "diff_relations of accounts' version",
    "diff_relations per column",
    "diff_relations save_to",
    "diff_relations of version",
    "diff_relations of a relation that does not exist",
    "diff_relations with fail_on_diff",
    "drop_schema is a dry run by default",
    "drop_schema dry_run false",
]


def listing(folder: Path) -> set[str]:
    """Every file and folder under `folder` (symbolic links not followed)."""
    return {
        os.path.relpath(os.path.join(root, name), folder)
        for root, dirs, files in os.walk(folder)
        for name in dirs + files
    }


@pytest.fixture(scope="module")
def ran(tmp_path_factory) -> dict:
    """The sequence, each dbt command's outcome by name; it goes on after a failure, so each
    test below reports its own step."""
    before = listing(SOURCE)
    project = tmp_path_factory.mktemp("delta_ops") / "integration_tests"
    shutil.copytree(SOURCE, project, ignore=shutil.ignore_patterns(*LEFT_OUT))
    (project / "packages.yml").write_text(f"packages:\n  - local: {PACKAGE_DIR}\n")
    # The folder's own profile, whatever the caller's environment points dbt at.
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DBT_", "DELTA_OPS_IT_"))}
    env["DBT_PROFILES_DIR"] = str(project)
    steps = {
        "deps": ["deps"],
        "build": ["build"],
        "operations": ["run-operation", "run_all_operation_tests"],
        "fail_on_diff": [
            "run-operation", "diff_relations",
            "--args", "{a: accounts, b: raw_accounts, fail_on_diff: true}",
        ],
    }  # fmt: skip
    outcomes = {
        name: subprocess.run(
            [str(DBT), *args], cwd=project, env=env, capture_output=True, text=True, timeout=1800
        )
        for name, args in steps.items()
    }
    outcomes["created in the folder"] = sorted(listing(SOURCE) - before)
    return outcomes


def said(outcome: subprocess.CompletedProcess) -> str:
    return outcome.stdout + outcome.stderr


def test_build_passes_with_the_time_travel_models_equal_to_their_expected_rows(ran):
    build = ran["build"]
    assert ran["deps"].returncode == 0, said(ran["deps"])
    assert build.returncode == 0, said(build)[-6000:]
    for test in ("equal_rows_accounts_history_", "equal_rows_accounts_as_of_"):
        assert re.search(rf"PASS {test}", build.stdout), build.stdout
    assert re.search(r"Done\. PASS=\d+ WARN=0 ERROR=0 SKIP=0", build.stdout), build.stdout


def test_every_operation_does_what_it_says_on_the_tables(ran):
    operations = ran["operations"]
    assert operations.returncode == 0, said(operations)[-6000:]
    passed = re.findall(r"operation tests: ok  (.*)$", operations.stdout, re.MULTILINE)
    missing = [check for check in CHECKS if not any(line.startswith(check) for line in passed)]
    assert not missing, f"no such check passed: {missing}\n{operations.stdout}"
    [total] = re.findall(r"operation tests: all (\d+) checks passed", operations.stdout)
    assert int(total) == len(passed) >= len(CHECKS)


def test_fail_on_diff_fails_the_command_on_relations_that_differ(ran):
    outcome = ran["fail_on_diff"]
    assert outcome.returncode != 0, said(outcome)
    assert (
        "diff_relations: data differs: 1 removed, 1 added, 1 changed (a = delta_ops_it.accounts, "
        "b = delta_ops_it.raw_accounts); fail_on_diff is set."
    ) in said(outcome)
    assert "Compilation Error" not in said(outcome)


def test_nothing_is_written_into_the_repository(ran):
    assert ran["created in the folder"] == []
