"""What a stranger does with the two deliverables, nothing of this project installed: the
adapter's wheel alone in a clean virtualenv, `dbt init` answering its prompts, the operations
package added by path to a small project with no `file_format` anywhere (the package's
integration tests), `dbt build` twice, `dbt clone` to another schema, one operation. The
tables are read from outside, with delta-rs. `make test-dist`."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from importlib import metadata
from pathlib import Path

import pytest
import yaml
from deltalake import DeltaTable

from dbt.adapters.sparkdelta.__version__ import version as adapter_version
from dbt.adapters.sparkdelta.session import SPARK_IVY_DIR, ivy_jar_name
from python_tests.conftest import PROJECT_DIR

pytestmark = pytest.mark.distribution

ADAPTER_DIR = PROJECT_DIR / "dbt-sparkdelta"
PACKAGE_DIR = PROJECT_DIR / "delta_ops"
TABLES = ["people", "people_table", "people_merged", "people_history"]
# dbt init's prompts: adapter (1: sparkdelta, listed first), method (1: session),
# session_home (default), schema, threads.
INIT_ANSWERS = "1\n1\n\nanalytics\n1\n"


def run(*command: str | Path, cwd: Path, env: dict[str, str], stdin: str | None = None) -> str:
    proc = subprocess.run(
        [str(part) for part in command], cwd=cwd, env=env, input=stdin,
        capture_output=True, text=True, timeout=900,
    )  # fmt: skip
    assert proc.returncode == 0, f"{command} failed:\n{proc.stdout[-4000:]}\n{proc.stderr[-4000:]}"
    return proc.stdout


def versions(warehouse: Path, schema: str) -> dict[str, int]:
    return {name: DeltaTable(str(warehouse / f"{schema}.db" / name)).version() for name in TABLES}


@pytest.fixture(scope="module")
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
    shutil.copytree(
        PACKAGE_DIR / "integration_tests", project, ignore=shutil.ignore_patterns(*leave_out)
    )
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


@pytest.fixture(scope="module")
def stranger(wheels, tmp_path_factory):
    """The stranger on the stack this suite runs on."""
    work = tmp_path_factory.mktemp("stranger")
    return make_stranger(work, wheels["dbt_sparkdelta"], pinned_stack())


@pytest.fixture(scope="module")
def built(stranger):
    venv, project, env = stranger
    dbt = venv / "bin" / "dbt"
    warehouse = project / ".sparkdelta" / "warehouse"
    run(dbt, "build", cwd=project, env=env)
    first = versions(warehouse, "analytics")
    seed = project / "seeds" / "people.csv"
    seed.write_text(seed.read_text().replace("3,Ada,\n", "3,Ada,math\n"))  # one changed row
    run(dbt, "build", cwd=project, env=env)
    second = versions(warehouse, "analytics")
    return dbt, project, env, warehouse, first, second


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
        *_, first, second = built
        for name in TABLES:
            assert second[name] > first[name], name

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


OLDEST_IDENTITY_MODEL = """{{ config(materialized='table', identity_columns=['person_sk']) }}
select id, name from {{ ref('people') }}
"""


@pytest.fixture(scope="module")
def oldest(wheels, tmp_path_factory):
    """The stranger on the oldest supported pair, its project built once."""
    work = tmp_path_factory.mktemp("oldest")
    venv, project, env = make_stranger(work, wheels["dbt_sparkdelta"], OLDEST_PAIR)
    run(venv / "bin" / "dbt", "build", cwd=project, env=env)
    return venv, project, env


class TestOldestSupportedPair:
    """The adapter's lower edge: pyspark 4.0.1 with Delta 4.0.1 (built for Spark 4.0) and
    dbt-core 1.11, from an empty Ivy cache; a feature Delta 4.0 lacks is refused, naming the
    release that brings it."""

    def test_the_project_builds_delta_tables(self, oldest):
        venv, project, env = oldest
        said = run(venv / "bin" / "dbt", "--version", cwd=project, env=env)
        assert re.search(r"installed: 1\.11\.", said), said
        assert resolved_delta_jar(Path(env["HOME"]), venv / "bin" / "python").name == (
            "io.delta_delta-spark_2.13-4.0.1.jar"
        )
        assert resolved_delta_jar(Path(env["HOME"]), venv / "bin" / "python").exists()
        warehouse = project / ".sparkdelta" / "warehouse"
        assert all(version >= 0 for version in versions(warehouse, "analytics").values())

    def test_identity_columns_are_refused_naming_delta_4_4(self, oldest):
        venv, project, env = oldest
        (project / "models" / "people_keyed.sql").write_text(OLDEST_IDENTITY_MODEL)
        proc = subprocess.run(
            [str(venv / "bin" / "dbt"), "run", "-s", "people_keyed"], cwd=project, env=env,
            capture_output=True, text=True, timeout=900,
        )  # fmt: skip
        assert proc.returncode != 0, proc.stdout
        assert "need Delta 4.4 or newer" in proc.stdout, proc.stdout[-3000:]
