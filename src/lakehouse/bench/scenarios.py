"""The benchmark's scenarios, each timed at one scale against its baseline: 1 and 2 incremental
and CDF runs against full refreshes, the no-change runs, bronze's age (1 as bronze grows),
3 deletion vectors, 4 a clustered query, 5 dbt's overhead over the SQL it runs."""

from __future__ import annotations

import time

from lakehouse.bench import report
from lakehouse.bench.data import BulkShop, write_batch
from lakehouse.bench.measure import files_read, last_metrics, log, seconds_of
from lakehouse.bench.project import Dbt
from lakehouse.bench.statements import StatementCounter, statement_kind

CHANGE_FRACTION = 0.01
UPDATE_FRACTION = 0.001
SEED_MODELS = ["order_statuses", "country_codes"]
# The SQL models of scenario 5 (silver and gold); Python models have no SQL to run directly.
SQL_MODELS = [
    "stg_shop__customers",
    "stg_shop__orders",
    "stg_shop__order_lines",
    "stg_shop__products",  # the quarantine reads every staged entity
    "stg_shop__payments",
    "int_shop_rows_quarantined",
    "int_orders_deduplicated",
    "int_order_lines_deduplicated",
    "int_customers_deduplicated",
    "fct_orders",
]
ALL_MODELS = [*SQL_MODELS, "int_order_row_lineage", "fct_order_lines", "fct_daily_revenue"]
# Scales of scenarios 1 and 2 only build what they need.
CHANGE_MODELS = [m for m in SQL_MODELS if m not in ("int_customers_deduplicated", "fct_orders")] + [
    "fct_daily_revenue"
]
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
        merge_metrics.append(last_metrics(spark, f"`{dbt.schema}`.`{SILVER_MERGE_MODEL}`"))
        timed("cdf", cdf, "run", "-s", CDF_MODEL)
        timed("full", full, "run", "-s", SILVER_MERGE_MODEL, "--full-refresh")
        timed("recompute", recompute, "run", "-s", CDF_MODEL, "--full-refresh")
        log(
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
        log(
            f"  {model}: {len(statements)} statements, {dbt.last_node_seconds:.2f}s in the model, "
            f"{wall:.2f}s in all"
        )
    return {"no_change": runs}


def shop_bronze(dbt: Dbt) -> str:
    return dbt.bronze_schema


def _read_seconds(spark, sql: str) -> float:
    """A query's read alone: every row computed, nothing collected or written."""
    return seconds_of(lambda: spark.sql(sql).write.format("noop").mode("overwrite").save())


BRONZE_AGES = (1, 2, 4)  # bronze order lines as a multiple of the initial load
SILVER_KEY = "order_line_id"


def bronze_age(spark, dbt: Dbt, shop: BulkShop, ages=BRONZE_AGES) -> dict:
    """Scenario 1 as bronze grows with history: the silver `cdf` model folds an append (the
    bench's batches are appends) into its rows without reading bronze, so its run should stay
    flat as bronze ages; a commit that rewrites bronze rows makes it recompute the touched keys
    from bronze's current rows instead. Per age (bronze's order lines as a multiple of the
    initial load; the source re-sending its initial load, rows equal to the originals, so
    silver does not change), one 1% uniform change batch, then: the incremental run of the
    silver MERGE model; the read that recompute would take (the changes' touched keys
    semi-joined to bronze, alone on spark.sql) and the files it takes of bronze's files (data
    skipping); one scan of all of bronze; the same model with --full-refresh."""
    bronze = f"`{shop_bronze(dbt)}`.`order_lines`"
    history = spark.sql(f"describe history {bronze}")
    initial = history.where("operation = 'WRITE'").agg({"version": "min"}).first()[0]
    points = []
    for age in ages:
        copies = age - (points[-1]["age"] if points else 1)
        for _ in range(copies):
            spark.sql(f"insert into {bronze} select * from {bronze} version as of {initial}")
        if copies > 0:
            dbt("run", "-s", SILVER_MERGE_MODEL, "--full-refresh")  # absorbs the re-sends
        batch_id, frames = shop.change(spark, CHANGE_FRACTION, "uniform")
        write_batch(spark, shop_bronze(dbt), batch_id, frames)
        end = int(spark.sql(f"describe history {bronze} limit 1").first().version)
        incremental = dbt.timed("run", "-s", SILVER_MERGE_MODEL)
        node = dbt.last_node_seconds
        touched = (
            f"select * from {bronze} version as of {end} as current_rows left semi join "
            f"table_changes('{shop_bronze(dbt)}.order_lines', {end}, {end}) as touched "
            f"on current_rows.{SILVER_KEY} <=> touched.{SILVER_KEY}"
        )
        floor = _read_seconds(spark, touched)
        scan = _read_seconds(spark, f"select * from {bronze}")
        detail = spark.sql(f"describe detail {bronze}").first()
        full = dbt.timed("run", "-s", SILVER_MERGE_MODEL, "--full-refresh")
        points.append(
            {
                "age": age,
                "bronze_rows": int(spark.table(bronze).count()),
                "bronze_files": int(detail.numFiles),
                "touched_read_files": files_read(spark, touched),
                "incremental_seconds": incremental,
                "incremental_node_seconds": node,
                "touched_read_seconds": floor,
                "bronze_scan_seconds": scan,
                "full_refresh_seconds": full,
            }
        )
        log(
            f"  bronze {age}x ({points[-1]['bronze_rows']:,} rows): incremental {incremental:.1f}s "
            f"(model {node:.1f}s), touched-row read {floor:.1f}s, bronze scan {scan:.1f}s, "
            f"full refresh {full:.1f}s"
        )
    return {"bronze_age": points}


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
            timings[enabled] = seconds_of(
                lambda table=table: spark.sql(
                    f"merge into {table} as dest using {updates} as src "
                    "on dest.order_line_id = src.order_line_id "
                    "when matched then update set dest.quantity = src.quantity, "
                    "dest.line_amount = src.quantity * dest.unit_price"
                ).collect()
            )
            metrics.append({"deletion_vectors": enabled, **last_metrics(spark, table)})
        on_times.append(timings[True])
        off_times.append(timings[False])
        log(f"  repeat {repeat + 1}: DV on {timings[True]:.1f}s / off {timings[False]:.1f}s")
    for enabled in (True, False):
        spark.sql(f"drop table if exists `{schema}`.`bench_dv_{str(enabled).lower()}`")
    spark.sql(f"drop table if exists {updates}")
    return {"deletion_vectors": _paired(on_times, off_times, merge_metrics=metrics)}


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
            "seconds": seconds_of(lambda: spark.sql(sql).collect()),
        }

    before = measure()
    optimize_seconds = seconds_of(
        lambda: spark.sql(f"optimize {table} zorder by ({QUERY_COLUMN})").collect()
    )
    after = measure()
    log(
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


# The SQL models dbt runs as one statement each, which target/run then holds: views and tables
# (a `cdf` model runs several: its change rows, a summary, the MERGE).
ONE_STATEMENT_MODELS = [
    m for m in SQL_MODELS if m not in ("int_orders_deduplicated", "int_order_lines_deduplicated")
]


def dbt_overhead(spark, dbt: Dbt, repeats: int) -> dict:
    """Scenario 5: `dbt build --full-refresh` of the SQL models dbt runs as one statement each
    against the SQL dbt ran for them (target/run), run directly with spark.sql in the same
    order."""
    build = ["build", "-s", *ONE_STATEMENT_MODELS, "--full-refresh", "--exclude-resource-type",
             "test", "--exclude-resource-type", "unit_test"]  # fmt: skip
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
            direct.append(seconds_of(run_direct))
        else:
            direct.append(seconds_of(run_direct))
            with_dbt.append(dbt.timed(*build))
            nodes.append(dbt.last_node_seconds)
        log(f"  repeat {repeat + 1}: dbt build {with_dbt[-1]:.1f}s / direct {direct[-1]:.1f}s")
    return {
        "dbt_overhead": _paired(
            with_dbt, direct, statements=len(statements), node_seconds={"measured": nodes}
        )
    }
