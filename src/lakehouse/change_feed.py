"""Change data feed (CDF) and row tracking: the logic of the change-driven models.

A change-driven model returns *change rows* that dbt's `cdf` incremental strategy
(`macros/strategies/`) applies to the model's Delta table in ONE commit together with the
watermark (the upstream versions processed), so a crash at any point loses or repeats nothing.
Change rows are the model's columns plus:

- `_change_type`: `insert`, `update_preimage`, `update_postimage`, `delete` (Delta's CDF
  values) or `snapshot` (a full snapshot: rows missing from it are deleted);
- `_commit_version`: orders the changes of one key (the latest wins);
- `_cdf_watermark`: JSON `{"schema.table": version}` of the upstream versions read.

The DataFrame functions are pure (plain DataFrames, no Delta); `ChangeFeed` does the Delta I/O.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from pyspark.sql import Column, DataFrame, SparkSession, Window
from pyspark.sql import functions as F

CHANGE_TYPE = "_change_type"
COMMIT_VERSION = "_commit_version"
COMMIT_TIMESTAMP = "_commit_timestamp"
WATERMARK = "_cdf_watermark"
META_COLUMNS = (CHANGE_TYPE, COMMIT_VERSION, COMMIT_TIMESTAMP, WATERMARK)
SNAPSHOT = "snapshot"
# Key of the commit user metadata (DESCRIBE HISTORY userMetadata) that holds the watermark;
# the same key is read by the `cdf_watermark` macro.
WATERMARK_KEY = "lakehouse_cdf_watermark"
ON_GAP_CHOICES = ("error", "full_refresh")


class ChangeFeedGap(RuntimeError):
    """The upstream's history no longer covers the versions a model still has to read."""


# --- watermark ------------------------------------------------------------------------------


def parse_watermark(user_metadata: str | None) -> dict[str, int] | None:
    """The watermark in one commit's user metadata, or None when the commit carries none."""
    if not user_metadata:
        return None
    try:
        payload = json.loads(user_metadata)
    except ValueError:
        return None
    if not isinstance(payload, dict) or not isinstance(payload.get(WATERMARK_KEY), dict):
        return None
    return {str(table): int(version) for table, version in payload[WATERMARK_KEY].items()}


def latest_watermark(history: Iterable[tuple[int, str | None]]) -> dict[str, int] | None:
    """The watermark of the newest commit that has one; `history` is (version, userMetadata)."""
    for _, user_metadata in sorted(history, key=lambda row: row[0], reverse=True):
        watermark = parse_watermark(user_metadata)
        if watermark is not None:
            return watermark
    return None


def table_key(relation: str) -> str:
    """`schema`.`table` (as dbt renders a relation) -> schema.table, the watermark's key."""
    return relation.replace("`", "").lower()


# --- change rows ----------------------------------------------------------------------------


def _change_order() -> list[Column]:
    # The latest commit wins; within one commit a row that exists wins over a delete (a key
    # deleted and inserted again by one commit ends up present).
    return [
        F.col(COMMIT_VERSION).desc(),
        F.when(F.col(CHANGE_TYPE) == "delete", 0).otherwise(1).desc(),
    ]


def net_changes(changes: DataFrame, keys: Sequence[str]) -> DataFrame:
    """The net effect per key of CDF rows: one row per key, its last change.

    Pre-images are dropped (the post-image of the same commit carries the new state); of
    several changes between two runs only the last counts, so insert+update is the updated row,
    update+delete a delete, delete+insert the re-inserted row.
    """
    if not keys:
        raise ValueError("net_changes needs at least one key column")
    latest_first = Window.partitionBy(*keys).orderBy(*_change_order())
    return (
        changes.where(F.col(CHANGE_TYPE) != "update_preimage")
        .withColumn("_change_rank", F.row_number().over(latest_first))
        .where(F.col("_change_rank") == 1)
        .drop("_change_rank")
    )


def apply_net_changes(current: DataFrame, net: DataFrame, keys: Sequence[str]) -> DataFrame:
    """`current` after applying `net` (from `net_changes`): what the `cdf` strategy's MERGE
    does, as a DataFrame, for tests and full recomputes."""
    data_columns = [c for c in current.columns if c not in META_COLUMNS]
    untouched = current.join(net.select(*keys), on=list(keys), how="left_anti")
    upserts = net.where(F.col(CHANGE_TYPE) != "delete").select(*data_columns)
    return untouched.select(*data_columns).unionByName(upserts)


def with_watermark(rows: DataFrame, watermark: dict[str, int]) -> DataFrame:
    return rows.withColumn(WATERMARK, F.lit(json.dumps(watermark, sort_keys=True)))


# --- row tracking ---------------------------------------------------------------------------


def changed_rows(rows: DataFrame, processed_version: int | None) -> DataFrame:
    """Rows whose row tracking commit version is newer than the last processed version.

    `rows` has `row_commit_version` (Delta's `_metadata.row_commit_version`); no CDF is read.
    """
    if processed_version is None:
        return rows
    return rows.where(F.col("row_commit_version") > F.lit(processed_version))


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
    return (
        changed.join(before, on="row_id", how="left")
        .select(
            "row_id",
            key,
            F.coalesce("_first_seen", "row_commit_version").alias("first_seen_version"),
            F.col("row_commit_version").alias("last_changed_version"),
            (F.coalesce("_count", F.lit(0)) + 1).cast("bigint").alias("change_count"),
        )
        .withColumn(CHANGE_TYPE, F.lit("update_postimage"))
        .withColumn(COMMIT_VERSION, F.col("last_changed_version"))
    )


def row_lineage(observations: DataFrame, key: str) -> DataFrame:
    """Full recompute of the lineage from every observation (`row_id`, `key`,
    `row_commit_version`) made at each run: what `update_row_lineage` maintains run by run."""
    return observations.groupBy("row_id").agg(
        F.max_by(key, "row_commit_version").alias(key),
        F.min("row_commit_version").alias("first_seen_version"),
        F.max("row_commit_version").alias("last_changed_version"),
        F.count_distinct("row_commit_version").cast("bigint").alias("change_count"),
    )


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


def plan_read(
    model: str, table: str, processed: int | None, earliest: int, end: int, on_gap: str
) -> str:
    """What to read of `table` (history from version `earliest`, pinned at `end`) after the
    `processed` version: `snapshot`, `nothing` (no new version) or `changes`."""
    if processed is None:
        return SNAPSHOT
    if processed + 1 < earliest:
        if on_gap == "full_refresh":
            return SNAPSHOT
        raise ChangeFeedGap(
            f"Model {model}: upstream {table} keeps history from version {earliest} only, but "
            f"changes after version {processed} are still to be read. Rebuild with "
            f"`dbt run --full-refresh -s {model}`, or set cdf_on_gap='full_refresh' on the model."
        )
    return "nothing" if processed >= end else "changes"


# --- Delta I/O ------------------------------------------------------------------------------


@dataclass
class ChangeFeed:
    """Reads upstream changes for one run of a change-driven Python model.

    Each upstream's end version is pinned on first read; the start is the target's watermark
    (exclusive). Without a watermark (first run, `--full-refresh`, or a target written
    otherwise) every read is a snapshot. `on_gap`: what to do when the upstream's history no
    longer starts early enough: `error` (default) or `full_refresh` (read a snapshot).
    """

    session: SparkSession
    model: str
    target: str | None = None
    on_gap: str = "error"
    processed: dict[str, int] = field(default_factory=dict)
    pinned: dict[str, int] = field(default_factory=dict)
    is_snapshot: bool = False

    def __post_init__(self) -> None:
        if self.on_gap not in ON_GAP_CHOICES:
            raise ValueError(
                f"Model {self.model}: cdf_on_gap={self.on_gap!r} is not one of {ON_GAP_CHOICES}."
            )
        watermark = self._stored_watermark() if self.target else None
        self.is_snapshot = watermark is None
        self.processed = watermark or {}

    def _stored_watermark(self) -> dict[str, int] | None:
        history = self.session.sql(f"describe history {self.target}").collect()
        return latest_watermark((row.version, row.userMetadata) for row in history)

    def _history_bounds(self, table: str) -> tuple[int, int]:
        versions = self.session.sql(f"describe history {table}").select("version").collect()
        return min(row.version for row in versions), max(row.version for row in versions)

    def end_version(self, table: str) -> int:
        key = table_key(table)
        if key not in self.pinned:
            self.pinned[key] = self._history_bounds(table)[1]
        return self.pinned[key]

    def current(self, table: str) -> DataFrame:
        """The upstream as of its pinned end version."""
        return self.session.sql(f"select * from {table} version as of {self.end_version(table)}")

    def changes(self, table: str) -> DataFrame:
        """CDF rows after the processed version up to the pinned end (empty when none), or the
        whole upstream as `snapshot` rows when this run is a snapshot."""
        key = table_key(table)
        end = self.end_version(table)
        earliest = self._history_bounds(table)[0]
        start = None if self.is_snapshot else self.processed.get(key)
        read = plan_read(self.model, key, start, earliest, end, self.on_gap)
        if read == SNAPSHOT:
            self.is_snapshot = True
            return self.current(table).select(
                "*",
                F.lit(SNAPSHOT).alias(CHANGE_TYPE),
                F.lit(end).cast("bigint").alias(COMMIT_VERSION),
                F.lit(None).cast("timestamp").alias(COMMIT_TIMESTAMP),
            )
        if read == "nothing":
            return self.session.sql(
                f"select *, cast(null as string) as {CHANGE_TYPE}, "
                f"cast(null as bigint) as {COMMIT_VERSION}, "
                f"cast(null as timestamp) as {COMMIT_TIMESTAMP} from {table} where false"
            )
        return self.session.sql(f"select * from table_changes('{key}', {start + 1}, {end})")

    def watermark(self) -> dict[str, int]:
        """The watermark to commit: what was processed before, advanced to the pinned ends."""
        return {**self.processed, **self.pinned}


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
    return with_watermark(rows, feed.watermark())


def row_lineage_from_tracking(
    feed: ChangeFeed, table: str, key: str, previous: DataFrame | None
) -> DataFrame:
    """The change rows of one run of a row lineage table: the upstream rows whose row commit
    version moved since the processed version (row tracking, no CDF), merged with `previous`."""
    end = feed.end_version(table)
    rows = feed.session.sql(
        f"select _metadata.row_id as row_id, {key}, "
        f"_metadata.row_commit_version as row_commit_version "
        f"from {table} version as of {end}"
    )
    processed = None if feed.is_snapshot else feed.processed.get(table_key(table))
    changed = changed_rows(rows, processed)
    if previous is None or feed.is_snapshot:
        previous = changed.select(
            "row_id",
            F.lit(None).cast("bigint").alias("first_seen_version"),
            F.lit(None).cast("bigint").alias("change_count"),
        ).where(F.lit(False))
    lineage = update_row_lineage(previous, changed, key)
    if feed.is_snapshot:
        lineage = lineage.withColumn(CHANGE_TYPE, F.lit(SNAPSHOT))
    return with_watermark(lineage, feed.watermark())
