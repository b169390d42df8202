"""Style is part of the test suite: a lint violation fails `make test` with the rule and line."""

from __future__ import annotations

import os
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
        result = _run(str(BIN / "ruff"), *args, "src", "python_tests", "models")
        assert result.returncode == 0, result.stdout + result.stderr
