"""DataFrame → DataFrame logic of the Python models (thin model files import these)."""

from __future__ import annotations

from collections.abc import Callable

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from dbt.adapters.sparkdelta.change_feed import (
    CHANGE_TYPE,
    COMMIT_VERSION,
    SNAPSHOT,
    ChangeFeed,
    state_before,
)

# Sums of amounts: Spark's widest decimal, so a sum of line amounts (decimal(21,2): an int
# quantity times a decimal(10,2) price) stays exact; a narrower cast overflows to NULL.
AMOUNT = "decimal(38,2)"


def customer_revenue(orders: DataFrame) -> DataFrame:
    """Order count, revenue and first/last order time per customer, cancelled orders excluded."""
    return (
        orders.where(F.col("status") != "cancelled")
        .groupBy("customer_id")
        .agg(
            F.count("order_id").alias("order_count"),
            F.sum("order_amount").cast(AMOUNT).alias("revenue"),
            F.min("ordered_at").alias("first_ordered_at"),
            F.max("ordered_at").alias("last_ordered_at"),
        )
    )


# --- row lineage (row tracking, no change feed) ----------------------------------------------


def update_row_lineage(previous: DataFrame, changed: DataFrame, key: str) -> DataFrame:
    """New lineage rows for the changed rows (`row_id`, `key`, `row_commit_version`).

    Lineage: `row_id` (stable across updates), first seen version, last changed version, and
    the number of changes seen (one per run in which the row's commit version moved).
    """
    before = previous.select(
        "row_id",
        F.col("first_seen_version").alias("_first_seen"),
        F.col("change_count").alias("_count"),
    )
    return changed.join(before, on="row_id", how="left").select(
        "row_id",
        key,
        F.coalesce("_first_seen", "row_commit_version").alias("first_seen_version"),
        F.col("row_commit_version").alias("last_changed_version"),
        (F.coalesce("_count", F.lit(0)) + 1).cast("bigint").alias("change_count"),
    )


def row_lineage_changes(
    feed: ChangeFeed, table: str, key: str, previous: DataFrame | None
) -> DataFrame:
    """The change rows of one run of a row lineage table: the live upstream rows whose row
    commit version moved since the processed version, merged with the `previous` lineage, and
    a delete for every lineage row whose upstream row is gone (deleted, a tombstone, or
    replaced by a full refresh of the upstream, which gives every row a new row id)."""
    live = ~F.col("is_deleted")
    changed = feed.tracked_rows(table, key, "is_deleted").where(live).drop("is_deleted")
    if previous is None or feed.is_snapshot:
        previous = changed.select(
            "row_id",
            F.lit(None).cast("bigint").alias("first_seen_version"),
            F.lit(None).cast("bigint").alias("change_count"),
        ).where(F.lit(False))
    lineage = update_row_lineage(previous, changed, key).select(
        "*",
        F.lit(SNAPSHOT if feed.is_snapshot else "update_postimage").alias(CHANGE_TYPE),
        F.col("last_changed_version").alias(COMMIT_VERSION),
    )
    if not feed.is_snapshot:  # a snapshot deletes what it does not hold by itself
        live_ids = feed.tracked_rows(table, "is_deleted", changed_only=False).where(live)
        gone = previous.join(live_ids.select("row_id"), on="row_id", how="left_anti")
        lineage = lineage.unionByName(
            gone.select(
                "row_id",
                F.lit(None).cast("bigint").alias(key),
                F.lit(None).cast("bigint").alias("first_seen_version"),
                F.lit(None).cast("bigint").alias("last_changed_version"),
                F.lit(None).cast("bigint").alias("change_count"),
                F.lit("delete").alias(CHANGE_TYPE),
                F.lit(feed.end_version(table)).cast("bigint").alias(COMMIT_VERSION),
            )
        )
    return feed.with_watermark(lineage)


# --- daily revenue (a gold aggregate maintained from the change feed) -----------------------


def daily_revenue(lines: DataFrame, orders: DataFrame) -> DataFrame:
    """Revenue per order date over the live lines of live, non-cancelled orders."""
    live_orders = orders.where(~F.col("is_deleted") & (F.col("status") != "cancelled"))
    live_lines = lines.where(~F.col("is_deleted"))
    # Per order first (an order has one date), then per date: no distinct count to expand.
    per_order = (
        live_lines.join(live_orders.select("order_id", "ordered_at"), on="order_id")
        .groupBy("order_id", F.to_date("ordered_at").alias("order_date"))
        .agg(
            F.count("order_line_id").alias("line_count"),
            F.sum("line_amount").alias("revenue"),
        )
    )
    return per_order.groupBy("order_date").agg(
        F.count("order_id").cast("bigint").alias("order_count"),
        F.sum("line_count").cast("bigint").alias("line_count"),
        F.sum("revenue").cast(AMOUNT).alias("revenue"),
    )


# The columns daily_revenue reads: lookups read no other (Parquet reads only these).
LINE_COLUMNS = ("order_line_id", "order_id", "line_amount", "is_deleted")
ORDER_COLUMNS = ("order_id", "ordered_at", "status", "is_deleted")

# Up to this many changed orders, lookups use a literal list of order ids (Delta's data
# skipping prunes files by their order_id range); above it, a broadcast semi-join.
LITERAL_KEYS_MAX = 5000


def _restrict_to(order_ids: DataFrame) -> Callable[[DataFrame], DataFrame]:
    """A filter of rows to the orders in `order_ids` (one distinct `order_id` column, computed):
    a literal list when it is short, else a broadcast semi-join."""
    few = [row.order_id for row in order_ids.limit(LITERAL_KEYS_MAX + 1).collect()]
    if len(few) <= LITERAL_KEYS_MAX:
        return lambda rows: rows.where(F.col("order_id").isin(few))
    return lambda rows: rows.join(F.broadcast(order_ids), on="order_id", how="left_semi")


def _contributions(lines: DataFrame, orders: DataFrame, sign: int) -> DataFrame:
    """Per order date, what these orders add to the daily revenue, times `sign`."""
    return daily_revenue(lines, orders).select(
        "order_date",
        (F.col("order_count") * sign).alias("order_count"),
        (F.col("line_count") * sign).alias("line_count"),
        (F.col("revenue") * sign).alias("revenue"),
    )


def same_value_in(column: str, values: list) -> Column:
    """`column` is one of `values`, NULL included (as the MERGE's null-safe match): isin()
    alone never matches NULL."""
    present = [value for value in values if value is not None]
    condition = F.col(column).isin(present)
    return condition | F.col(column).isNull() if len(present) < len(values) else condition


def daily_revenue_changes(
    feed: ChangeFeed,
    line_changes: DataFrame,
    order_changes: DataFrame,
    lines_table: str,
    orders_table: str,
) -> DataFrame:
    """Change rows for the daily revenue, in proportion to the change: for the orders the
    feeds touch (either table, any change row), their contribution in the state the target
    last saw is subtracted and their contribution now is added, per order date, to the
    target's current rows of those dates. Each silver table is read once, for the touched
    orders' rows only (a literal key list lets Delta skip the other files); their state as of
    the versions last processed is those rows with the changed ones put back as the change
    feed's pre-images show them (no second read at the old version)."""
    meta = (CHANGE_TYPE, COMMIT_VERSION)
    line_changes = line_changes.select(*LINE_COLUMNS, *meta).localCheckpoint()
    order_changes = order_changes.select(*ORDER_COLUMNS, *meta).localCheckpoint()
    order_ids = (
        line_changes.select("order_id")
        .union(order_changes.select("order_id"))
        .where(F.col("order_id").isNotNull())
        .distinct()
        .localCheckpoint()
    )
    # Every change row's order is touched, so these rows hold every current row of a changed key.
    touched = _restrict_to(order_ids)
    lines = touched(feed.current(lines_table).select(*LINE_COLUMNS))
    orders = touched(feed.current(orders_table).select(*ORDER_COLUMNS))
    lines, orders = lines.localCheckpoint(), orders.localCheckpoint()
    delta = _contributions(lines, orders, 1).unionByName(
        _contributions(
            state_before(lines, line_changes, "order_line_id"),
            state_before(orders, order_changes, "order_id"),
            -1,
        )
    )
    # Computed once: the touched dates are read from it, and the run's change rows built on it.
    delta = delta.localCheckpoint()
    dates = [row.order_date for row in delta.select("order_date").distinct().collect()]
    existing = feed.session.table(feed.target).where(same_value_in("order_date", dates))
    totals = (
        existing.select("order_date", "order_count", "line_count", "revenue")
        .unionByName(delta)
        .groupBy("order_date")
        .agg(
            F.sum("order_count").cast("bigint").alias("order_count"),
            F.sum("line_count").cast("bigint").alias("line_count"),
            F.sum("revenue").cast(AMOUNT).alias("revenue"),
        )
    )
    # A date left with no line is deleted; the others get their new totals.
    emptied = F.col("line_count") == 0
    return totals.select(
        "order_date",
        *(F.when(~emptied, F.col(c)).alias(c) for c in ("order_count", "line_count", "revenue")),
        F.when(emptied, "delete").otherwise("update_postimage").alias(CHANGE_TYPE),
    )


def daily_revenue_from_feed(feed: ChangeFeed, lines_table: str, orders_table: str) -> DataFrame:
    """The change rows of one run of the daily revenue: touched dates, or all on a snapshot."""
    line_changes = feed.changes(lines_table)
    order_changes = feed.changes(orders_table)
    if feed.is_snapshot:
        rows = daily_revenue(feed.current(lines_table), feed.current(orders_table)).withColumn(
            CHANGE_TYPE, F.lit(SNAPSHOT)
        )
    else:
        rows = daily_revenue_changes(feed, line_changes, order_changes, lines_table, orders_table)
    return feed.with_watermark(rows.withColumn(COMMIT_VERSION, F.lit(0).cast("bigint")))
