"""The wheels the distribution tests install, built once per pytest process."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest

from python_tests.conftest import PROJECT_DIR
from python_tests.distribution.strangers import ADAPTER_DIR, run


@pytest.fixture(scope="session")
def wheels(tmp_path_factory) -> dict[str, Path]:
    """Both wheels, built from copies of their sources (a build writes into its source tree)."""
    out = tmp_path_factory.mktemp("dist")
    sources = tmp_path_factory.mktemp("sources")
    skip = shutil.ignore_patterns("build", "*.egg-info", "__pycache__")
    shutil.copytree(ADAPTER_DIR, sources / "adapter", ignore=skip)
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(PROJECT_DIR / name, sources / name)
    shutil.copytree(PROJECT_DIR / "src", sources / "src", ignore=skip)
    for source in (sources / "adapter", sources):
        run(sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "-w", out, source,
            cwd=out, env=dict(os.environ))  # fmt: skip
    found = {path.name.split("-")[0]: path for path in out.glob("*.whl")}
    assert set(found) == {"dbt_sparkdelta", "delta_lakehouse"}, found
    return found
