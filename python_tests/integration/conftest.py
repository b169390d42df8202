"""dbt invoked in-process against the pytest session's SparkSession, one schema per test class."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from dbt.cli.main import dbtRunnerResult

from lakehouse.dbt_runner import DbtFailed, DbtRunner, environment
from lakehouse.shop.bronze import load_batches
from lakehouse.shop.generator import ShopGenerator
from python_tests.conftest import PROJECT_DIR, unique_schema


@dataclass
class OperationResult:
    success: bool
    error: str  # what dbt reported (run results do not carry a run-operation's error)
    log: str  # what the operation logged

    @property
    def said(self) -> str:
        return f"{self.log}\n{self.error}"


@dataclass
class DbtProject:
    """The repository's dbt project, pointed at throw-away schemas."""

    spark: object
    schema: str
    bronze_schema: str
    work_dir: Path
    orders: int = 200
    project_dir: Path = PROJECT_DIR
    runner: DbtRunner = field(init=False)

    def __post_init__(self) -> None:
        self.runner = DbtRunner(
            self.project_dir, PROJECT_DIR, self.schema, self.bronze_schema, work_dir=self.work_dir
        )

    def env(self, **values: str):
        """Extra environment for the dbt invocations inside the `with` block."""
        return environment(values)

    @staticmethod
    def model_results(result: dbtRunnerResult) -> list:
        """The results of the models of an invocation."""
        return [r for r in result.result if r.node.resource_type == "model"]

    def dbt(self, *args: str, expect_success: bool = True) -> dbtRunnerResult:
        try:
            return self.runner.invoke(*args, expect_success=expect_success)
        except DbtFailed as exc:
            raise AssertionError(str(exc)) from None

    def run_operation(self, name: str, args: dict) -> OperationResult:
        """One run-operation: whether it succeeded, its error and everything it logged."""
        errors: list[str] = []
        logged: list[str] = []

        def collect(event) -> None:
            if event.info.name in ("RunningOperationCaughtError", "RunningOperationUncaughtError"):
                errors.append(event.data.exc)
            elif event.info.name in ("JinjaLogInfo", "JinjaLogWarning"):
                logged.append(event.info.msg)

        result = self.runner.invoke(
            "run-operation", name, "--args", json.dumps(args),
            expect_success=False, callbacks=[collect],
        )  # fmt: skip
        error = " ".join(errors) or str(result.exception or "")
        return OperationResult(result.success, error, "\n".join(logged))

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


# A project with no macros and no file_format of its own: everything Delta comes from the
# sparkdelta adapter's defaults.
SCRATCH_PROJECT_YML = """
name: scratch
version: "0.1.0"
config-version: 2
profile: lakehouse
models:
  scratch:
    +materialized: incremental
"""


class ScratchProject(DbtProject):
    """A throw-away dbt project of the adapter alone (no macros of its own), for scenarios."""

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
    return ScratchProject(
        spark=delta_spark,
        schema=unique_schema("macros"),
        bronze_schema=unique_schema("unused"),
        work_dir=tmp_path_factory.mktemp("dbt"),
        project_dir=project_dir,
    )
