"""dbt invoked in-process against the pytest session's SparkSession, one schema per test class."""

from __future__ import annotations

import os
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest
from dbt.cli.main import dbtRunner, dbtRunnerResult

from lakehouse.bronze import load_batches
from lakehouse.generator import ShopGenerator
from python_tests.conftest import PROJECT_DIR, unique_schema


@contextmanager
def _env(**values: str):
    saved = {key: os.environ.get(key) for key in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


@dataclass
class DbtProject:
    """The repository's dbt project, pointed at throw-away schemas."""

    spark: object
    schema: str
    bronze_schema: str
    work_dir: Path
    orders: int = 200
    project_dir: Path = PROJECT_DIR

    def env(self, **values: str):
        """Extra environment for the dbt invocations inside the `with` block."""
        return _env(**values)

    @staticmethod
    def model_results(result: dbtRunnerResult) -> list:
        """The results of the models of an invocation (not those of the project's hooks)."""
        return [r for r in result.result if r.node.resource_type == "model"]

    def dbt(self, *args: str, expect_success: bool = True) -> dbtRunnerResult:
        with _env(LAKEHOUSE_SCHEMA=self.schema, LAKEHOUSE_BRONZE_SCHEMA=self.bronze_schema):
            result = dbtRunner().invoke(
                [
                    *args,
                    "--project-dir", str(self.project_dir),
                    "--profiles-dir", str(PROJECT_DIR),
                    "--target-path", str(self.work_dir / "target"),
                    "--log-path", str(self.work_dir / "logs"),
                ]
            )  # fmt: skip
        if expect_success and not result.success:
            failed = [
                f"{r.node.unique_id}: {r.status} {r.message}"
                for r in (result.result or [])
                if getattr(r, "status", None) not in ("success", "pass")
            ]
            raise AssertionError(f"dbt {' '.join(args)} failed: {result.exception or failed}")
        return result

    def load_bronze(self, through: int) -> None:
        generator = ShopGenerator(orders=self.orders, seed=7)
        load_batches(self.spark, generator, self.bronze_schema, through)

    def relation(self, name: str) -> str:
        return f"`{self.schema}`.`{name}`"

    def rows(self, sql: str) -> list:
        return self.spark.sql(sql).collect()

    def detail(self, name: str):
        return self.rows(f"describe detail {self.relation(name)}")[0]

    def tblproperties(self, name: str) -> dict[str, str]:
        return {r.key: r.value for r in self.rows(f"show tblproperties {self.relation(name)}")}

    def history(self, name: str) -> list:
        return self.rows(f"describe history {self.relation(name)}")

    def count(self, name: str, where: str = "true") -> int:
        return self.rows(f"select count(*) as n from {self.relation(name)} where {where}")[0].n


@pytest.fixture(scope="class")
def dbt_project(delta_spark, tmp_path_factory) -> DbtProject:
    return DbtProject(
        spark=delta_spark,
        schema=unique_schema("test"),
        bronze_schema=unique_schema("bronze"),
        work_dir=tmp_path_factory.mktemp("dbt"),
    )


SCRATCH_PROJECT_YML = """
name: lakehouse
version: "0.1.0"
config-version: 2
profile: lakehouse
macro-paths: ["macros"]
on-run-end:
  - "{{ lakehouse.reset_commit_metadata() }}"
models:
  lakehouse:
    +file_format: delta
    +materialized: incremental
    +pre-hook: "{{ lakehouse.set_commit_metadata() }}"
    +post-hook: "{{ lakehouse.reset_commit_metadata() }}"
"""


class ScratchProject(DbtProject):
    """A throw-away dbt project that uses the repository's macros, for macro scenarios."""

    def write(self, relative_path: str, text: str) -> None:
        path = self.project_dir / relative_path
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)

    def model(self, name: str, sql: str) -> None:
        self.write(f"models/{name}.sql", sql)

    def compiled(self, name: str) -> str:
        self.dbt("compile", "-s", name)
        [path] = (self.work_dir / "target" / "compiled").rglob(f"{name}.sql")
        return path.read_text()


@pytest.fixture(scope="class")
def scratch_project(delta_spark, tmp_path_factory) -> ScratchProject:
    project_dir = tmp_path_factory.mktemp("scratch_project")
    (project_dir / "dbt_project.yml").write_text(SCRATCH_PROJECT_YML)
    (project_dir / "macros").symlink_to(PROJECT_DIR / "macros")
    return ScratchProject(
        spark=delta_spark,
        schema=unique_schema("macros"),
        bronze_schema=unique_schema("unused"),
        work_dir=tmp_path_factory.mktemp("dbt"),
        project_dir=project_dir,
    )
