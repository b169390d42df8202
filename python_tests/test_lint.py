"""Style is part of the test suite: a lint violation fails `make test` with the rule and line."""

from __future__ import annotations

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


def test_sql_lints_clean(tmp_path):
    # The dbt templater compiles the project (and may start Spark): give it its own home.
    env = {**os.environ, "LAKEHOUSE_HOME": str(tmp_path / "home"), "LAKEHOUSE_SCHEMA": "lint"}
    result = _run(str(BIN / "sqlfluff"), "lint", "--nocolor", env=env)
    assert result.returncode == 0, result.stdout + result.stderr


def test_python_lints_clean():
    for args in (("check",), ("format", "--check")):
        result = _run(str(BIN / "ruff"), *args, "src", "dbt-sparkdelta", "python_tests", "models")
        assert result.returncode == 0, result.stdout + result.stderr


def test_an_uppercase_keyword_fails_the_lint_naming_rule_and_file(tmp_path):
    project = tmp_path / "project"
    project.mkdir()
    for name in ("models", "macros", "seeds", "snapshots", "tests"):
        shutil.copytree(PROJECT_DIR / name, project / name)
    for name in ("dbt_project.yml", "profiles.yml", ".sqlfluff", ".sqlfluffignore"):
        shutil.copy(PROJECT_DIR / name, project / name)
    model = project / "models" / "marts" / "fct_orders.sql"
    model.write_text(model.read_text().replace("select * from", "SELECT * from", 1))
    env = {**os.environ, "LAKEHOUSE_HOME": str(tmp_path / "home"), "LAKEHOUSE_SCHEMA": "lint"}
    result = subprocess.run(
        [str(BIN / "sqlfluff"), "lint", "--nocolor", "models/marts/fct_orders.sql"],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode != 0
    assert "fct_orders.sql" in result.stdout
    assert "CP01" in result.stdout
