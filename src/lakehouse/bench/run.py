"""`make bench`: time the pipeline's scenarios at several scales, write docs/bench/.

Everything runs in this process on one SparkSession (the `local` target's), and dbt is
invoked in-process (lakehouse.dbt_runner), so every dbt run and every direct `spark.sql` shares
the JVM. Each scale gets its own throw-away schemas. Settings (environment):

- `LAKEHOUSE_BENCH_SCALES`: order lines per scale, comma-separated (default 100000,1000000,5000000)
- `LAKEHOUSE_BENCH_LARGE_SCALES`: scales at which only scenarios 1 and 2 (and the no-change
  runs) are measured (default 20000000; empty for none)
- `LAKEHOUSE_BENCH_REPEATS`: repetitions per scale (default 3); `LAKEHOUSE_BENCH_REPEATS_LARGE`
  for scales of 2 million order lines and more (default 2)
- `LAKEHOUSE_BENCH_FILE_SIZE_MB`: the target file size of OPTIMIZE (default 4)
"""

from __future__ import annotations

import json
import os
import platform
import sys
import threading
import time
from contextlib import contextmanager
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path

from dbt.adapters.sparkdelta.session import get_or_create_session, spark_conf
from lakehouse.bench import report
from lakehouse.bench.data import DISTRIBUTIONS, HOT_ORDERS, HOT_SHARE, BulkShop, write_batch
from lakehouse.bench.statements import StatementCounter, statement_kind
from lakehouse.dbt_runner import DbtRunner
from lakehouse.settings import session_settings

CHANGE_FRACTION = 0.01
UPDATE_FRACTION = 0.001
MEMORY_SAMPLE_S = 0.5
SEED_MODELS = ["order_statuses"]
# The SQL models of scenario 5 (silver and gold); Python models have no SQL to run directly.
SQL_MODELS = [
    "stg_shop__customers",
    "stg_shop__orders",
    "stg_shop__order_lines",
    "int_shop_rows_quarantined",
    "int_orders_deduplicated",
    "int_order_lines_deduplicated",
    "fct_orders",
]
ALL_MODELS = [*SQL_MODELS, "int_order_row_lineage", "fct_order_lines", "fct_daily_revenue"]
# Scales of scenarios 1 and 2 only build what they need.
CHANGE_MODELS = [m for m in SQL_MODELS if m != "fct_orders"] + ["fct_daily_revenue"]
# The project's incremental models, each run alone with no upstream change (the fixed cost).
INCREMENTAL_MODELS = [
    "int_orders_deduplicated",
    "int_order_lines_deduplicated",
    "int_order_row_lineage",
    "fct_order_lines",
    "fct_daily_revenue",
]
SILVER_MERGE_MODEL = "int_order_lines_deduplicated"
CDF_MODEL = "fct_daily_revenue"
QUERY_TABLE, QUERY_COLUMN = "fct_order_lines", "order_id"


def _log(message: str) -> None:
    print(f"[bench {datetime.now(UTC):%H:%M:%S}] {message}", flush=True)


# --- memory --------------------------------------------------------------------------------


def _rss_bytes(pid: int, field: str = "VmRSS") -> int:
    try:
        with open(f"/proc/{pid}/status") as status:
            for line in status:
                if line.startswith(field + ":"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


class MemorySampler:
    """Samples the resident set of this Python process plus the JVM's in a thread; `peak` is
    the largest sum seen since the last `reset`."""

    def __init__(self, pids: list[int], interval: float = MEMORY_SAMPLE_S):
        self.pids, self.interval = pids, interval
        self.peak = self.overall_peak = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.is_set():
            total = sum(_rss_bytes(pid) for pid in self.pids)
            self.peak = max(self.peak, total)
            self.overall_peak = max(self.overall_peak, total)
            self._stop.wait(self.interval)

    def start(self) -> MemorySampler:
        self._thread.start()
        return self

    def reset(self) -> None:
        self.peak = 0

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()


# --- dbt -----------------------------------------------------------------------------------


class Dbt:
    """dbt invoked in-process on the project, pointed at one scale's schemas."""

    def __init__(self, project_dir: Path, work_dir: Path, schema: str, bronze_schema: str):
        self.runner = DbtRunner(
            project_dir, project_dir, schema, bronze_schema, work_dir=work_dir, quiet=True
        )
        self.last_node_seconds = 0.0  # time dbt spent in the nodes of the last invocation

    @property
    def target_dir(self) -> Path:
        return self.runner.target_dir

    @property
    def schema(self) -> str:
        return self.runner.schema

    @property
    def bronze_schema(self) -> str:
        return self.runner.bronze_schema

    def __call__(self, *args: str, callbacks: list | None = None):
        result = self.runner.invoke(*args, callbacks=callbacks)
        self.last_node_seconds = sum(
            getattr(r, "execution_time", 0.0) or 0.0 for r in (result.result or [])
        )
        return result

    def timed(self, *args: str) -> float:
        start = time.perf_counter()
        self(*args)
        return time.perf_counter() - start

    def executed_sql(self) -> list[str]:
        """The SQL each model of the last invocation ran (target/run), in execution order."""
        results = json.loads((self.target_dir / "run_results.json").read_text())
        manifest = json.loads((self.target_dir / "manifest.json").read_text())
        statements = []
        for result in results["results"]:
            node = manifest["nodes"][result["unique_id"]]
            if node["resource_type"] != "model":
                continue
            path = self.target_dir / "run" / node["package_name"] / node["original_file_path"]
            statements.append(path.read_text())
        return statements


def _timed(action) -> float:
    start = time.perf_counter()
    action()
    return time.perf_counter() - start


# --- scenarios -----------------------------------------------------------------------------


def _paired(measured: list[float], baseline: list[float], **extra) -> dict:
    return {
        "measured": report.summarize(measured),
        "baseline": report.summarize(baseline),
        "ratio": report.summarize(report.paired_ratios(measured, baseline)),
        "samples": {"measured": measured, "baseline": baseline},
        **extra,
    }


def incremental_and_cdf(
    spark, dbt: Dbt, shop: BulkShop, repeats: int, distribution: str = "uniform"
) -> dict:
    """Scenarios 1 and 2 for one change distribution (`localised` or `uniform`, see
    lakehouse.bench.data): per repetition a new 1% change batch, applied incrementally to the
    silver MERGE model and then to the CDF-maintained gold aggregate; then the same two models
    rebuilt with --full-refresh on the same data. Keys `incremental_vs_full.<distribution>`
    and `cdf_vs_recompute.<distribution>`."""
    incremental, full, cdf, recompute, batches = [], [], [], [], []
    nodes: dict[str, list[float]] = {"incremental": [], "full": [], "cdf": [], "recompute": []}
    merge_metrics: list[dict] = []

    def timed(kind: str, samples: list[float], *args: str) -> None:
        samples.append(dbt.timed(*args))
        nodes[kind].append(dbt.last_node_seconds)

    for repeat in range(repeats):
        batch_id, frames = shop.change(spark, CHANGE_FRACTION, distribution)
        counts = write_batch(spark, shop_bronze(dbt), batch_id, frames)
        batches.append({"batch_id": batch_id, "rows": counts})
        dbt("run", "-s", "int_shop_rows_quarantined", "int_orders_deduplicated")
        timed("incremental", incremental, "run", "-s", SILVER_MERGE_MODEL)
        # Delta's own breakdown of the MERGE (materializeSourceTimeMs, scanTimeMs, rewriteTimeMs,
        # files and deletion vectors touched): where the incremental run's time goes.
        merge_metrics.append(_last_metrics(spark, f"`{dbt.schema}`.`{SILVER_MERGE_MODEL}`"))
        timed("cdf", cdf, "run", "-s", CDF_MODEL)
        timed("full", full, "run", "-s", SILVER_MERGE_MODEL, "--full-refresh")
        timed("recompute", recompute, "run", "-s", CDF_MODEL, "--full-refresh")
        _log(
            f"  {distribution} repeat {repeat + 1}: incremental {incremental[-1]:.1f}s / full "
            f"{full[-1]:.1f}s; cdf {cdf[-1]:.1f}s / recompute {recompute[-1]:.1f}s"
        )
    # Of each invocation's wall time, what dbt reports as the model's own execution (the rest
    # is dbt start-up, parsing and the run's hooks), to tell fixed from data-driven costs.
    return {
        f"incremental_vs_full.{distribution}": _paired(
            incremental,
            full,
            batches=batches,
            merge_metrics=merge_metrics,
            node_seconds={"measured": nodes["incremental"], "baseline": nodes["full"]},
        ),
        f"cdf_vs_recompute.{distribution}": _paired(
            cdf, recompute, node_seconds={"measured": nodes["cdf"], "baseline": nodes["recompute"]}
        ),
    }


def no_change_runs(dbt: Dbt, models: list[str]) -> dict:
    """Per incremental model, a `dbt run` of it alone when upstream has not changed: the Spark
    statements it sends (lakehouse.bench.statements, by kind), the model's own time as dbt
    reports it, and the invocation's wall time (dbt start-up and parsing included). The models
    are brought up to date first."""
    dbt("run", "-s", *models)
    runs = {}
    for model in models:
        counter = StatementCounter()
        with counter.counting():
            start = time.perf_counter()
            result = dbt("run", "-s", model, callbacks=[counter.callback])
            wall = time.perf_counter() - start
        node = next(r.node.unique_id for r in result.result if r.node.name == model)
        statements = counter.of_node(node)
        kinds: dict[str, int] = {}
        for sql in statements:
            kinds[statement_kind(sql)] = kinds.get(statement_kind(sql), 0) + 1
        runs[model] = {
            "statements": len(statements),
            "statement_kinds": kinds,
            "statements_outside_the_model": len(counter.outside_nodes()),
            "node_seconds": dbt.last_node_seconds,
            "wall_seconds": wall,
        }
        _log(
            f"  {model}: {len(statements)} statements, {dbt.last_node_seconds:.2f}s in the model, "
            f"{wall:.2f}s in all"
        )
    return {"no_change": runs}


def shop_bronze(dbt: Dbt) -> str:
    return dbt.bronze_schema


def _last_metrics(spark, table: str) -> dict:
    row = spark.sql(f"describe history {table} limit 1").collect()[0]
    return dict(row.operationMetrics or {})


def deletion_vectors(spark, schema: str, repeats: int) -> dict:
    """Scenario 3: the same 0.1% update MERGE into two copies of the silver order lines, one
    with deletion vectors, one without."""
    source = f"`{schema}`.`{SILVER_MERGE_MODEL}`"
    updates = f"`{schema}`.`bench_dv_updates`"
    on_times, off_times, metrics = [], [], []
    for repeat in range(repeats):
        for enabled in (True, False):
            spark.sql(
                f"create or replace table `{schema}`.`bench_dv_{str(enabled).lower()}` "
                f"using delta tblproperties ('delta.enableDeletionVectors' = '{enabled}') "
                f"as select * from {source}"
            )
        spark.sql(
            f"create or replace table {updates} using delta as "
            f"select order_line_id, pmod(quantity, 4) + 1 as quantity from {source} "
            f"where pmod(xxhash64({repeat}, order_line_id), {round(1 / UPDATE_FRACTION)}) = 0"
        )
        timings = {}
        # Alternate which copy goes first, so neither always profits from a warm cache.
        for enabled in (True, False) if repeat % 2 == 0 else (False, True):
            table = f"`{schema}`.`bench_dv_{str(enabled).lower()}`"
            timings[enabled] = _timed(
                lambda table=table: spark.sql(
                    f"merge into {table} as dest using {updates} as src "
                    "on dest.order_line_id = src.order_line_id "
                    "when matched then update set dest.quantity = src.quantity, "
                    "dest.line_amount = src.quantity * dest.unit_price"
                ).collect()
            )
            metrics.append({"deletion_vectors": enabled, **_last_metrics(spark, table)})
        on_times.append(timings[True])
        off_times.append(timings[False])
        _log(f"  repeat {repeat + 1}: DV on {timings[True]:.1f}s / off {timings[False]:.1f}s")
    for enabled in (True, False):
        spark.sql(f"drop table if exists `{schema}`.`bench_dv_{str(enabled).lower()}`")
    spark.sql(f"drop table if exists {updates}")
    return {"deletion_vectors": _paired(on_times, off_times, merge_metrics=metrics)}


def files_read(spark, sql: str) -> int:
    """Files the scans of a query read, from the executed plan's scan metrics (`numFiles`,
    "number of files read"), after running it. Adaptive execution is off for the query, so
    the executed plan is the one that ran."""
    previous = spark.conf.get("spark.sql.adaptive.enabled")
    spark.conf.set("spark.sql.adaptive.enabled", "false")
    try:
        frame = spark.sql(sql)
        frame.collect()
        plan = frame._jdf.queryExecution().executedPlan()
    finally:
        spark.conf.set("spark.sql.adaptive.enabled", previous)
    leaves = plan.collectLeaves()
    total, scans = 0, 0
    for index in range(leaves.size()):
        metric = leaves.apply(index).metrics().get("numFiles")
        if metric.isDefined():
            total += int(metric.get().value())
            scans += 1
    if not scans:
        raise RuntimeError(f"no file scan with a numFiles metric in the plan of: {sql}")
    return total


def clustered_query(spark, schema: str) -> dict:
    """Scenario 4: a selective query on `order_id` (0.1% of the orders) of the gold order lines:
    files read against the table's files, before and after OPTIMIZE ZORDER BY (order_id)."""
    table = f"`{schema}`.`{QUERY_TABLE}`"
    low, high = spark.sql(f"select min({QUERY_COLUMN}), max({QUERY_COLUMN}) from {table}").first()
    width = max(1, (high - low) // 1000)
    start = low + (high - low) // 2
    predicate = f"{QUERY_COLUMN} between {start} and {start + width - 1}"
    sql = f"select count(*), sum(line_amount) from {table} where {predicate}"

    def measure() -> dict:
        detail = spark.sql(f"describe detail {table}").first()
        return {
            "files_read": files_read(spark, sql),
            "files_total": int(detail.numFiles),
            "size_bytes": int(detail.sizeInBytes),
            "seconds": _timed(lambda: spark.sql(sql).collect()),
        }

    before = measure()
    optimize_seconds = _timed(
        lambda: spark.sql(f"optimize {table} zorder by ({QUERY_COLUMN})").collect()
    )
    after = measure()
    _log(
        f"  files read {before['files_read']}/{before['files_total']} before OPTIMIZE, "
        f"{after['files_read']}/{after['files_total']} after"
    )
    return {
        "clustered_query": {
            "table": QUERY_TABLE,
            "column": QUERY_COLUMN,
            "predicate": predicate,
            "before": before,
            "after": after,
            "optimize_seconds": optimize_seconds,
            "optimize_max_file_size": spark.conf.get("spark.databricks.delta.optimize.maxFileSize"),
        }
    }


def dbt_overhead(spark, dbt: Dbt, repeats: int) -> dict:
    """Scenario 5: `dbt build --full-refresh` of the silver and gold SQL models against the SQL
    dbt ran for them (target/run), run directly with spark.sql in the same order."""
    build = ["build", "-s", *SQL_MODELS, "--full-refresh", "--exclude-resource-type", "test",
             "--exclude-resource-type", "unit_test"]  # fmt: skip
    with_dbt, direct, nodes = [], [], []
    statements: list[str] = []

    def run_direct() -> None:
        for statement in statements:
            spark.sql(statement).collect()

    for repeat in range(repeats):
        if repeat % 2 == 0:
            with_dbt.append(dbt.timed(*build))
            nodes.append(dbt.last_node_seconds)
            # target/run now holds the SQL of exactly these models, as dbt just ran it.
            statements = statements or dbt.executed_sql()
            direct.append(_timed(run_direct))
        else:
            direct.append(_timed(run_direct))
            with_dbt.append(dbt.timed(*build))
            nodes.append(dbt.last_node_seconds)
        _log(f"  repeat {repeat + 1}: dbt build {with_dbt[-1]:.1f}s / direct {direct[-1]:.1f}s")
    return {
        "dbt_overhead": _paired(
            with_dbt, direct, statements=len(statements), node_seconds={"measured": nodes}
        )
    }


# --- the run -------------------------------------------------------------------------------


def machine_info(spark) -> dict:
    cpu_model = platform.processor() or "unknown CPU"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu_model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    memory = 0
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                memory = int(line.split()[1]) * 1024
    except OSError:
        pass
    versions = {"Python": platform.python_version()}
    for package in ("pyspark", "delta-spark", "dbt-core", "dbt-spark"):
        versions[package] = metadata.version(package)
    versions["Java"] = spark._jvm.java.lang.System.getProperty("java.version")
    return {
        "cpu_model": cpu_model,
        "cores": os.cpu_count(),
        "memory_gib": memory / report.GIB,
        "os": f"{platform.system()} {platform.release()}",
        "load_average": " ".join(f"{x:.2f}" for x in os.getloadavg()),
        "versions": versions,
    }


def _scales(variable: str = "LAKEHOUSE_BENCH_SCALES", default: str = "100000,1000000,5000000"):
    raw = os.environ.get(variable)
    raw = default if raw is None else raw
    return [int(value.strip().replace("_", "")) for value in raw.split(",") if value.strip()]


def _large_scales() -> list[int]:
    return _scales("LAKEHOUSE_BENCH_LARGE_SCALES", "20000000")


def _repeats(order_lines: int) -> int:
    if order_lines >= 2_000_000:
        return int(os.environ.get("LAKEHOUSE_BENCH_REPEATS_LARGE") or 2)
    return int(os.environ.get("LAKEHOUSE_BENCH_REPEATS") or 3)


@contextmanager
def _step(name: str, timings: dict):
    _log(name)
    start = time.perf_counter()
    yield
    timings[name] = time.perf_counter() - start


def run_scale(
    spark, project_dir: Path, work_dir: Path, order_lines: int, sampler, changes_only=False
) -> dict:
    """Every scenario at one scale; `changes_only`: scenarios 1 and 2 and the no-change runs."""
    schema, bronze = f"bench_{order_lines}", f"bench_{order_lines}_bronze"
    for name in (schema, bronze):
        spark.sql(f"drop schema if exists `{name}` cascade")
    dbt = Dbt(project_dir, work_dir, schema, bronze)
    shop = BulkShop(order_lines=order_lines)
    repeats = _repeats(order_lines)
    sampler.reset()
    steps: dict[str, float] = {}
    models = CHANGE_MODELS if changes_only else ALL_MODELS
    no_change_models = [m for m in INCREMENTAL_MODELS if m in models]
    _log(f"{order_lines:,} order lines, {repeats} repetitions")
    with _step("generate bronze batch 0", steps):
        bronze_rows = write_batch(spark, bronze, 0, shop.initial(spark))
    with _step("initial dbt build", steps):
        dbt("seed", "-s", *SEED_MODELS)
        dbt("run", "-s", *models)
    scenarios: dict = {}
    for distribution in DISTRIBUTIONS:
        with _step(f"scenarios 1 and 2: incremental and CDF, {distribution} changes", steps):
            scenarios.update(incremental_and_cdf(spark, dbt, shop, repeats, distribution))
    with _step("no-change runs of the incremental models", steps):
        scenarios.update(no_change_runs(dbt, no_change_models))
    if not changes_only:
        with _step("scenario 3: deletion vectors", steps):
            scenarios.update(deletion_vectors(spark, schema, repeats))
        with _step("scenario 5: dbt overhead", steps):
            scenarios.update(dbt_overhead(spark, dbt, repeats))
        with _step("scenario 4: clustered query", steps):
            scenarios.update(clustered_query(spark, schema))
    for name in (schema, bronze):
        spark.sql(f"drop schema if exists `{name}` cascade")
    return {
        "order_lines": order_lines,
        "changes_only": changes_only,
        "repeats": repeats,
        "bronze_rows_batch_0": bronze_rows,
        "peak_rss_bytes": sampler.peak,
        "step_seconds": steps,
        "scenarios": scenarios,
    }


def main() -> int:
    started = time.perf_counter()
    project_dir = Path(os.environ.get("DBT_PROJECT_DIR") or os.getcwd()).resolve()
    file_size_mb = int(os.environ.get("LAKEHOUSE_BENCH_FILE_SIZE_MB") or 4)
    settings = session_settings(project_dir).with_conf(
        {"spark.databricks.delta.optimize.maxFileSize": str(file_size_mb * 1024**2)}
    )
    conf = spark_conf(settings)
    spark = get_or_create_session(settings)
    work_dir = settings.home / "bench"
    machine = machine_info(spark)
    jvm_pid = int(spark._jvm.java.lang.ProcessHandle.current().pid())
    sampler = MemorySampler([os.getpid(), jvm_pid]).start()
    scales = []
    try:
        for order_lines in _scales():
            scales.append(run_scale(spark, project_dir, work_dir, order_lines, sampler))
        for order_lines in _large_scales():
            scales.append(
                run_scale(spark, project_dir, work_dir, order_lines, sampler, changes_only=True)
            )
    finally:
        sampler.stop()
    results = {
        "finished_at": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "duration_s": time.perf_counter() - started,
        "machine": machine,
        "config": {
            "scales": _scales(),
            "large_scales": _large_scales(),
            "change_fraction": CHANGE_FRACTION,
            "distributions": {
                "localised": {"hot_orders": HOT_ORDERS, "hot_share": HOT_SHARE},
                "uniform": {},
            },
            "update_fraction": UPDATE_FRACTION,
            "spark_master": conf["spark.master"],
            "driver_memory": conf["spark.driver.memory"],
            "shuffle_partitions": int(conf["spark.sql.shuffle.partitions"]),
            "optimize_max_file_size_mb": file_size_mb,
            "memory_sample_s": MEMORY_SAMPLE_S,
        },
        "peak_rss_bytes": sampler.overall_peak,
        "peak_hwm_bytes": {
            "python": _rss_bytes(os.getpid(), "VmHWM"),
            "jvm": _rss_bytes(jvm_pid, "VmHWM"),
        },
        "scales": scales,
    }
    out_dir = Path(os.environ.get("LAKEHOUSE_BENCH_OUT") or report.OUT_DIR)
    report.write_outputs(results, out_dir)
    print(report.render_markdown(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
