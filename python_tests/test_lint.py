"""Style is part of the test suite: a lint violation fails `make test` with the rule and line."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from python_tests.conftest import PROJECT_DIR

BIN = Path(sys.executable).parent


def _run(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        args, cwd=PROJECT_DIR, env=env, capture_output=True, text=True, timeout=600
    )


def test_python_lints_clean():
    for args in (("check",), ("format", "--check")):
        result = _run(str(BIN / "ruff"), *args, "src", "dbt-sparkdelta", "python_tests", "models")
        assert result.returncode == 0, result.stdout + result.stderr


def test_sql_lints_clean_but_for_an_uppercase_keyword_named_with_rule_and_file(tmp_path):
    """One sqlfluff run (its dbt templater compiles the project) over a copy of the project
    with one keyword made uppercase: that violation, named with its rule and file, is the only
    one."""
    project = tmp_path / "project"
    project.mkdir()
    for name in ("models", "macros", "seeds", "snapshots", "tests"):
        shutil.copytree(PROJECT_DIR / name, project / name)
    for name in ("dbt_project.yml", "profiles.yml", ".sqlfluff", ".sqlfluffignore"):
        shutil.copy(PROJECT_DIR / name, project / name)
    model = project / "models" / "marts" / "fct_orders.sql"
    model.write_text(model.read_text().replace("select * from", "SELECT * from", 1))
    # The dbt templater compiles the project (and may start Spark): give it its own home.
    env = {**os.environ, "LAKEHOUSE_HOME": str(tmp_path / "home"), "LAKEHOUSE_SCHEMA": "lint"}
    result = subprocess.run(
        [str(BIN / "sqlfluff"), "lint", "--nocolor", "--format", "json"],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode != 0, result.stderr
    violations = [
        (
            Path(file["filepath"]).resolve().relative_to(project.resolve()).as_posix(),
            violation["code"],
        )
        for file in json.loads(result.stdout)
        for violation in file["violations"]
    ]
    assert violations == [("models/marts/fct_orders.sql", "CP01")], violations
