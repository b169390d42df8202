"""dbt invoked in-process against the pytest session's SparkSession, one schema per test class;
the shop built once for the session (`shop`), and once through one endpoint (`endpoint_shop`)."""

from __future__ import annotations

import itertools
import json
import shutil
import subprocess
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

import pytest
from dbt.cli.main import dbtRunnerResult
from deltalake import DeltaTable

from lakehouse.dbt_runner import DbtFailed, DbtRunner, environment
from lakehouse.shop.bronze import load_batches
from lakehouse.shop.generator import ShopGenerator
from python_tests.conftest import (
    PROJECT_DIR,
    endpoint_env,
    running_test_endpoint,
    unique_schema,
)


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

    def count(self, name: str, where: str = "true", version: int | None = None) -> int:
        as_of = "" if version is None else f" version as of {version}"
        sql = f"select count(*) as n from {self.relation(name)}{as_of} where {where}"
        return self.rows(sql)[0].n


def table_versions(spark, schema: str) -> dict[str, int]:
    """Each Delta table of `schema` with its current version."""
    found = {}
    for table in spark.catalog.listTables(schema):
        if not table.isTemporary and table.tableType != "VIEW":
            history = spark.sql(f"describe history `{schema}`.`{table.name}` limit 1").collect()
            found[table.name] = history[0].version
    return found


def jvm_log_lines(result: subprocess.CompletedProcess) -> list[str]:
    """The lines of a command's output that a JVM logged (Spark, Ivy's resolution)."""
    return [
        line
        for line in (result.stdout + result.stderr).splitlines()
        if any(marker in line for marker in (" WARN ", " INFO ", "[Stage ", "Ivy ", ":: "))
    ]


def column_metadata(spark, table: str) -> dict[str, dict]:
    """Each column's metadata in the table's current schema (`table`: its SQL name), read by
    delta-rs from the log (where Delta keeps identity and generation expressions)."""
    location = spark.sql(f"describe detail {table}").collect()[0].location
    schema = json.loads(DeltaTable(location.removeprefix("file:")).schema().to_json())
    return {column["name"]: column["metadata"] for column in schema["fields"]}


def assert_delta_computes_the_shop_s_keys(
    spark, table: Callable[[str], str], rebuilt: bool
) -> None:
    """dim_products.product_sk is an identity column and fct_orders.order_date a generated
    column, in the tables' protocol and schema, with the values Delta gave them (`table`: a
    model's SQL name); `rebuilt` (a change batch built after the first): a product kept its key
    from the first build (dim_products is an incremental MERGE; the batches reprice in place),
    and fct_orders was rebuilt in one commit, never empty."""
    product_sk = column_metadata(spark, table("dim_products"))["product_sk"]
    assert product_sk["delta.identity.allowExplicitInsert"] is False, product_sk  # ALWAYS
    order_date = column_metadata(spark, table("fct_orders"))["order_date"]
    assert order_date["delta.generationExpression"] == "cast(ordered_at as date)", order_date
    for name, feature in (("dim_products", "identityColumns"), ("fct_orders", "generatedColumns")):
        [detail] = spark.sql(f"describe detail {table(name)}").collect()
        assert feature in detail.tableFeatures, (name, detail.tableFeatures)
    [wrong] = spark.sql(
        f"select count(*) as n from {table('fct_orders')} "
        "where order_date is distinct from cast(ordered_at as date)"
    ).collect()
    assert wrong.n == 0, f"{wrong.n} orders whose order_date is not their ordered_at's date"

    select = f"select product_id, product_sk, unit_price from {table('dim_products')}"
    now = {r.product_id: r for r in spark.sql(select).collect()}
    assert now and len({r.product_sk for r in now.values()}) == len(now), "keys not unique"
    if not rebuilt:
        return
    history = spark.sql(f"describe history {table('dim_products')}").collect()
    merges = [r.version for r in history if r.operation == "MERGE"]
    assert merges, "the change batch's build merged nothing into dim_products"
    first_build = spark.sql(f"{select} version as of {min(merges) - 1}").collect()
    before = {r.product_id: r for r in first_build}
    assert before.keys() == now.keys()  # the change batches reprice; none adds or deletes
    assert {p: r.product_sk for p, r in now.items()} == {p: r.product_sk for p, r in before.items()}
    assert any(now[p].unit_price != before[p].unit_price for p in now), "nothing repriced"
    # fct_orders, a table model, rebuilt with the same definition: one INSERT OVERWRITE, so no
    # version after its first build's INSERT (version 1) is empty
    orders = spark.sql(f"describe history {table('fct_orders')}").collect()
    assert orders[0].operationParameters["mode"] == "Overwrite", orders[0]
    count = "select count(*) as n from {} version as of {}"
    empty = [
        commit.version
        for commit in orders[:-1]  # version 0, the CREATE, holds no row yet
        if spark.sql(count.format(table("fct_orders"), commit.version)).collect()[0].n == 0
    ]
    assert empty == [], f"fct_orders was empty at versions {empty}"


@pytest.fixture(scope="class")
def dbt_project(delta_spark, tmp_path_factory) -> DbtProject:
    return DbtProject(
        spark=delta_spark,
        schema=unique_schema("test"),
        bronze_schema=unique_schema("bronze"),
        work_dir=tmp_path_factory.mktemp("dbt"),
    )


@dataclass
class BuiltShop:
    """The shop built once for the session, batch by batch as production runs it, with dbt's
    threads (SHOP_THREADS): batch 0 and the last change batch with `dbt build` (tests
    included), any change batches between merged in without tests; the silver tables
    OPTIMIZEd after the builds of OPTIMIZED_BATCHES only (`optimize_silver_after_build`; the
    last build runs without vars, as a development build does, so its manifest is
    production's state for the analyst's loop: `state_dir`). Tests that read it must leave it
    as they found it (rows and tables)."""

    project: DbtProject
    builds: list  # the dbtRunnerResult of each batch's build, batch 0 first
    state_dir: Path
    env: dict[str, str] = field(default_factory=dict)  # the target's environment, if not local
    endpoint: object = None  # the endpoint's EndpointSettings, on the `thrift` target


def keep_state(project: DbtProject) -> Path:
    """A copy of the manifest of `project`'s last dbt invocation: production's state."""
    state_dir = project.work_dir / "prod-state"
    state_dir.mkdir()
    shutil.copy(project.work_dir / "target" / "manifest.json", state_dir)
    return state_dir


SHOP_BATCHES = (0, 1)
OPTIMIZED_BATCHES = (0,)
SHOP_THREADS = "4"  # the threads of a production build (the thrift target's default)
WITHOUT_TESTS = ("--exclude", "resource_type:test", "resource_type:unit_test")


@pytest.fixture(scope="session")
def shop(delta_spark, tmp_path_factory) -> BuiltShop:
    project = DbtProject(
        spark=delta_spark,
        schema=unique_schema("shop"),
        bronze_schema=unique_schema("shop_bronze"),
        work_dir=tmp_path_factory.mktemp("shop"),
    )
    builds = []
    for batch in SHOP_BATCHES:
        project.load_bronze(through=batch)
        optimize = ["--vars", "{optimize_silver_after_build: true}"] * (batch in OPTIMIZED_BATCHES)
        tests = () if batch in (SHOP_BATCHES[0], SHOP_BATCHES[-1]) else WITHOUT_TESTS
        builds.append(project.dbt("build", "--threads", SHOP_THREADS, *optimize, *tests))
    return BuiltShop(project, builds, keep_state(project))


@pytest.fixture(scope="session")
def endpoint_shop(tmp_path_factory) -> Iterator[BuiltShop]:
    """The project's own endpoint (`lakehouse endpoint start`, its own LAKEHOUSE_HOME and
    ports: its Derby metastore admits one process), one for the session, and the shop's
    batch 0 built through it on the `thrift` target with dbt's threads (SHOP_THREADS; Python
    models over Spark Connect).
    `project.spark` is the endpoint's Spark Connect session; run dbt inside
    `environment(shop.env)`."""
    from pyspark.sql.connect.session import SparkSession as ConnectSession

    with running_test_endpoint(endpoint_env(tmp_path_factory), timeout=300) as ep:
        session = ConnectSession.builder.remote(ep.connect_url).create()
        try:
            project = DbtProject(
                spark=session,
                schema=unique_schema("ops"),
                bronze_schema=unique_schema("ops_bronze"),
                work_dir=tmp_path_factory.mktemp("dbt_thrift"),
                orders=150,
            )
            env = {
                "LAKEHOUSE_TARGET": "thrift",
                "LAKEHOUSE_THRIFT_PORT": str(ep.thrift_port),
                "LAKEHOUSE_SPARK_CONNECT_URL": ep.connect_url,
                "LAKEHOUSE_THREADS": SHOP_THREADS,
            }
            with environment(env):
                project.load_bronze(through=0)
                build = project.dbt("build")
            yield BuiltShop(project, [build], keep_state(project), env, ep)
        finally:
            session.stop()


# The project's Python models: with dbt's threads, two of them run at once.
PYTHON_MODELS = (
    "int_order_row_lineage",
    "fct_customer_revenue",
    "fct_daily_revenue",
    "delta_commit_audit",
)


def overlapping_python_models(run_results: Path) -> list[tuple[str, str]]:
    """The pairs of Python models whose execution overlapped in time (run_results.json)."""
    windows = {}
    for result in json.loads(run_results.read_text())["results"]:
        name = result["unique_id"].split(".")[-1]
        if result["unique_id"].startswith("model.") and name in PYTHON_MODELS:
            [execute] = [t for t in result["timing"] if t["name"] == "execute"]
            windows[name] = tuple(
                datetime.fromisoformat(execute[key].replace("Z", "+00:00"))
                for key in ("started_at", "completed_at")
            )
    return [
        (a, b)
        for a, b in itertools.combinations(sorted(windows), 2)
        if windows[a][0] < windows[b][1] and windows[b][0] < windows[a][1]
    ]


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
