"""The stranger of test_stranger_install.py on the oldest stack the adapter supports, from an
empty Ivy cache: a build, and a feature Delta 4.0 lacks refused. `make test-dist`."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from python_tests.distribution.strangers import (
    OLDEST_PAIR,
    SCHEMA,
    make_stranger,
    resolved_delta_jar,
    run,
    versions,
)

pytestmark = pytest.mark.distribution


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
        jar = resolved_delta_jar(Path(env["HOME"]), venv / "bin" / "python")
        assert jar.name == "io.delta_delta-spark_2.13-4.0.1.jar" and jar.exists(), jar
        warehouse = project / ".sparkdelta" / "warehouse"
        assert all(version >= 0 for version in versions(warehouse, SCHEMA).values())

    def test_identity_columns_are_refused_naming_delta_4_4(self, oldest):
        venv, project, env = oldest
        (project / "models" / "people_keyed.sql").write_text(OLDEST_IDENTITY_MODEL)
        proc = subprocess.run(
            [str(venv / "bin" / "dbt"), "run", "-s", "people_keyed"], cwd=project, env=env,
            capture_output=True, text=True, timeout=900,
        )  # fmt: skip
        assert proc.returncode != 0, proc.stdout
        assert "need Delta 4.4 or newer" in proc.stdout, proc.stdout[-3000:]
