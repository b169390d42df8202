"""A stranger's install, for the distribution tests: the adapter's wheel alone in a clean
virtualenv on a given stack, a new user's home, and a copy of the operations package's
integration tests with the profile `dbt init` writes."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from importlib import metadata
from pathlib import Path

from deltalake import DeltaTable

from dbt.adapters.sparkdelta.session import SPARK_IVY_DIR, ivy_jar_name
from python_tests.conftest import PROJECT_DIR

ADAPTER_DIR = PROJECT_DIR / "dbt-sparkdelta"
PACKAGE_DIR = PROJECT_DIR / "delta_ops"
PACKAGE_TESTS = PACKAGE_DIR / "integration_tests"
SCHEMA = "analytics"  # the schema the stranger answers dbt init with
TABLES = ["people", "people_table", "people_merged", "people_history"]
# dbt init's prompts: adapter (1: sparkdelta, listed first), method (1: session),
# session_home (default), schema, threads.
INIT_ANSWERS = f"1\n1\n\n{SCHEMA}\n1\n"


def run(*command: str | Path, cwd: Path, env: dict[str, str], stdin: str | None = None) -> str:
    proc = subprocess.run(
        [str(part) for part in command], cwd=cwd, env=env, input=stdin,
        capture_output=True, text=True, timeout=900,
    )  # fmt: skip
    assert proc.returncode == 0, f"{command} failed:\n{proc.stdout[-4000:]}\n{proc.stderr[-4000:]}"
    return proc.stdout


def listing(folder: Path) -> set[str]:
    """Every file and folder under `folder` (symbolic links not followed)."""
    return {
        os.path.relpath(os.path.join(root, name), folder)
        for root, dirs, files in os.walk(folder)
        for name in dirs + files
    }


def versions(warehouse: Path, schema: str) -> dict[str, int]:
    return {name: DeltaTable(str(warehouse / f"{schema}.db" / name)).version() for name in TABLES}


# The oldest stack the adapter supports: CI builds the stranger's project on it too.
OLDEST_PAIR = ["pyspark==4.0.1", "delta-spark==4.0.1", "dbt-core~=1.11.0"]


def pinned_stack() -> list[str]:
    """The stack this suite runs on (pyproject.toml's pins), for the stranger's pip: the newest
    releases PyPI serves need what this machine cannot fetch (delta-spark 4.4.1's jars are not
    on Maven Central here; dbt-core 1.12.6's parser downloads its wheel from GitHub)."""
    names = ("pyspark", "delta-spark", "dbt-core", "dbt-core-experimental-parser")
    return [f"{name}=={metadata.version(name)}" for name in names]


def make_stranger(work: Path, wheel: Path, stack: list[str]) -> tuple[Path, Path, dict[str, str]]:
    """A clean virtualenv with the adapter's wheel and its `session` extra on `stack`, a new
    user's home (empty Ivy cache and ~/.m2: Spark resolves Delta from Maven Central), and the
    operations package's integration project with the profile `dbt init` writes."""
    venv, home = work / "venv", work / "home"
    home.mkdir()
    ours = ("VIRTUAL_ENV", "PYTHONPATH")
    env = {k: v for k, v in os.environ.items() if k not in ours and not k.startswith("LAKEHOUSE_")}
    pip_cache = run(sys.executable, "-m", "pip", "cache", "dir", cwd=work, env=env).strip()
    # The JVM takes its home (Ivy's cache, ~/.m2) from user.home, not $HOME; pip keeps its
    # cache (pyspark is a source package, built once).
    env.update(HOME=str(home), JAVA_TOOL_OPTIONS=f"-Duser.home={home}", PIP_CACHE_DIR=pip_cache)
    python = f"{sys.base_prefix}/bin/python{sys.version_info.major}.{sys.version_info.minor}"
    run(python, "-m", "venv", venv, cwd=work, env=env)
    constraints = work / "constraints.txt"
    constraints.write_text("\n".join(stack) + "\n")
    pip = [venv / "bin" / "python", "-m", "pip", "install", "--quiet", "-c", constraints]
    run(*pip, f"{wheel}[session]", cwd=work, env=env)
    project = work / "project"
    # the project as committed, less its own profile: the stranger's comes from `dbt init`
    leave_out = ("profiles.yml", "package-lock.yml", "target", "dbt_packages", "logs")
    shutil.copytree(PACKAGE_TESTS, project, ignore=shutil.ignore_patterns(*leave_out))
    (project / "packages.yml").write_text(f"packages:\n  - local: {PACKAGE_DIR}\n")
    env["DBT_PROFILES_DIR"] = str(work / "profiles")
    dbt = venv / "bin" / "dbt"
    run(dbt, "init", cwd=project, env=env, stdin=INIT_ANSWERS)
    run(dbt, "deps", cwd=project, env=env)
    return venv, project, env


def resolved_delta_jar(home: Path, python: Path) -> Path:
    """Where Spark's Ivy put the delta-spark jar of that virtualenv's pyspark and delta-spark."""
    coordinate = run(python, "-c", "from dbt.adapters.sparkdelta.session import "
                     "delta_coordinates; print(delta_coordinates()[0])",
                     cwd=home, env={"PATH": os.environ["PATH"]}).strip()  # fmt: skip
    return home / SPARK_IVY_DIR / "jars" / ivy_jar_name(coordinate)
