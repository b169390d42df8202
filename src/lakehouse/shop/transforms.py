"""DataFrame → DataFrame logic of the Python models (thin model files import these)."""

from __future__ import annotations

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from dbt.adapters.sparkdelta.change_feed import (
    CHANGE_TYPE,
    COMMIT_VERSION,
    SNAPSHOT,
    ChangeFeed,
)


def customer_revenue(orders: DataFrame) -> DataFrame:
    """Order count, revenue and first/last order time per customer, cancelled orders excluded."""
    return (
        orders.where(F.col("status") != "cancelled")
        .groupBy("customer_id")
        .agg(
            F.count("order_id").alias("order_count"),
            F.sum("order_amount").cast("decimal(18,2)").alias("revenue"),
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
    return (
        live_lines.join(live_orders.select("order_id", "ordered_at"), on="order_id")
        .groupBy(F.to_date("ordered_at").alias("order_date"))
        .agg(
            F.count_distinct("order_id").cast("bigint").alias("order_count"),
            F.count("order_line_id").cast("bigint").alias("line_count"),
            F.sum("line_amount").cast("decimal(18,2)").alias("revenue"),
        )
    )


def touched_order_dates(
    line_changes: DataFrame, order_changes: DataFrame, orders: DataFrame
) -> DataFrame:
    """The order dates whose revenue the changes may alter.

    Every change row counts (pre-images and deletes too: they hold the old order and date).
    A changed line touches the current date of its order; a changed order touches both its old
    and its new date.
    """
    order_ids = line_changes.select("order_id").union(order_changes.select("order_id"))
    current_dates = order_ids.join(orders.select("order_id", "ordered_at"), on="order_id")
    return (
        current_dates.select(F.to_date("ordered_at").alias("order_date"))
        .union(order_changes.select(F.to_date("ordered_at").alias("order_date")))
        .where(F.col("order_date").isNotNull())
        .distinct()
    )


def daily_revenue_changes(
    line_changes: DataFrame, order_changes: DataFrame, lines: DataFrame, orders: DataFrame
) -> DataFrame:
    """Change rows for the daily revenue: the touched dates recomputed from the current
    `lines` and `orders`, and a delete for each touched date that has no revenue any more."""
    touched = touched_order_dates(line_changes, order_changes, orders)
    recomputed = daily_revenue(lines, orders).join(touched, on="order_date")
    emptied = touched.join(recomputed.select("order_date"), on="order_date", how="left_anti")
    return (
        recomputed.withColumn(CHANGE_TYPE, F.lit("update_postimage"))
        .unionByName(
            emptied.select(
                "order_date",
                F.lit(None).cast("bigint").alias("order_count"),
                F.lit(None).cast("bigint").alias("line_count"),
                F.lit(None).cast("decimal(18,2)").alias("revenue"),
                F.lit("delete").alias(CHANGE_TYPE),
            )
        )
        .withColumn(COMMIT_VERSION, F.lit(0).cast("bigint"))
    )


def daily_revenue_from_feed(feed: ChangeFeed, lines_table: str, orders_table: str) -> DataFrame:
    """The change rows of one run of the daily revenue: touched dates, or all on a snapshot."""
    line_changes = feed.changes(lines_table)
    order_changes = feed.changes(orders_table)
    lines, orders = feed.current(lines_table), feed.current(orders_table)
    if feed.is_snapshot:
        rows = daily_revenue(lines, orders).select(
            "*",
            F.lit(SNAPSHOT).alias(CHANGE_TYPE),
            F.lit(0).cast("bigint").alias(COMMIT_VERSION),
        )
    else:
        rows = daily_revenue_changes(line_changes, order_changes, lines, orders)
    return feed.with_watermark(rows)
