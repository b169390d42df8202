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
- `LAKEHOUSE_BENCH_BRONZE_AGES`: bronze's ages in "scenario 1 as bronze ages", as multiples of
  the initial load, comma-separated (default 1,2,4)
"""

from __future__ import annotations

import os
import sys
import time
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path

from dbt.adapters.sparkdelta.session import get_or_create_session, spark_conf
from lakehouse.bench import report
from lakehouse.bench.data import DISTRIBUTIONS, HOT_ORDERS, HOT_SHARE, BulkShop, write_batch
from lakehouse.bench.measure import MEMORY_SAMPLE_S, MemorySampler, log, machine_info, rss_bytes
from lakehouse.bench.project import Dbt
from lakehouse.bench.scenarios import (
    ALL_MODELS,
    BRONZE_AGES,
    CHANGE_FRACTION,
    CHANGE_MODELS,
    INCREMENTAL_MODELS,
    SEED_MODELS,
    UPDATE_FRACTION,
    bronze_age,
    clustered_query,
    dbt_overhead,
    deletion_vectors,
    incremental_and_cdf,
    no_change_runs,
)
from lakehouse.settings import session_settings


def _integers(variable: str, default: str) -> list[int]:
    """A comma-separated list of integers from the environment; set but empty: none."""
    raw = os.environ.get(variable)
    raw = default if raw is None else raw
    return [int(value.strip().replace("_", "")) for value in raw.split(",") if value.strip()]


def _scales() -> list[int]:
    return _integers("LAKEHOUSE_BENCH_SCALES", "100000,1000000,5000000")


def _large_scales() -> list[int]:
    return _integers("LAKEHOUSE_BENCH_LARGE_SCALES", "20000000")


def _bronze_ages() -> list[int]:
    return _integers("LAKEHOUSE_BENCH_BRONZE_AGES", ",".join(map(str, BRONZE_AGES)))


def _repeats(order_lines: int) -> int:
    if order_lines >= 2_000_000:
        return int(os.environ.get("LAKEHOUSE_BENCH_REPEATS_LARGE") or 2)
    return int(os.environ.get("LAKEHOUSE_BENCH_REPEATS") or 3)


@contextmanager
def _step(name: str, timings: dict):
    log(name)
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
    log(f"{order_lines:,} order lines, {repeats} repetitions")
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
        with _step("scenario 1 as bronze ages", steps):
            scenarios.update(bronze_age(spark, dbt, shop, _bronze_ages()))
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
            "python": rss_bytes(os.getpid(), "VmHWM"),
            "jvm": rss_bytes(jvm_pid, "VmHWM"),
        },
        "scales": scales,
    }
    out_dir = Path(os.environ.get("LAKEHOUSE_BENCH_OUT") or report.OUT_DIR)
    report.write_outputs(results, out_dir)
    print(report.render_markdown(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
