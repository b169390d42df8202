"""The uninterrupted run the crash and endpoint tests compare with, built once for the package."""

from __future__ import annotations

import pytest

from python_tests.conftest import unique_schema
from python_tests.integration.conftest import DbtProject
from python_tests.integration.reliability.shared import BUILD


@pytest.fixture(scope="package")
def reference(delta_spark, tmp_path_factory):
    """The uninterrupted run: batches 0, 1 and 2 built one by one (in the pytest JVM)."""
    project = DbtProject(
        spark=delta_spark,
        schema=unique_schema("uninterrupted"),
        bronze_schema=unique_schema("uninterrupted_bronze"),
        work_dir=tmp_path_factory.mktemp("uninterrupted"),
    )
    for batch in (0, 1, 2):
        project.load_bronze(through=batch)
        project.dbt(*BUILD)
    return project
