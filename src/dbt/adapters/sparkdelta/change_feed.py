"""The change-feed protocol of the `cdf` incremental strategy, in one place.

A change-driven model returns *change rows*: its columns plus

- `_change_type`: `insert`, `update_preimage`, `update_postimage`, `delete` (Delta's change
  data feed values) or `snapshot` (a full snapshot: target rows missing from it are deleted);
- `_commit_version`: orders the changes of one key (the latest wins);
- `_cdf_watermark`: JSON `{"schema.table": version}` of the upstream versions read.

The strategy (`macros/materializations/incremental.sql`, `macros/cdf/`) applies their net
effect per `unique_key` with one MERGE whose commit also carries the new watermark (its
`userMetadata`), so a crash loses or repeats nothing.

What to read of an upstream is decided here for both kinds of model: SQL models through the
adapter method `cdf_read_plan` (used by the `cdf_changes` macro), Python models through
`ChangeFeed`. Both read the watermark the same way, from the newest commit of the target
that carries one.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

CHANGE_TYPE = "_change_type"
COMMIT_VERSION = "_commit_version"
COMMIT_TIMESTAMP = "_commit_timestamp"
WATERMARK = "_cdf_watermark"
META_COLUMNS = (CHANGE_TYPE, COMMIT_VERSION, COMMIT_TIMESTAMP, WATERMARK)
SNAPSHOT = "snapshot"
# Key of the commit user metadata (DESCRIBE HISTORY userMetadata) that holds the watermark.
WATERMARK_KEY = "sparkdelta_cdf_watermark"
ON_GAP_CHOICES = ("error", "full_refresh")


class ChangeFeedError(ValueError):
    """A change-driven model cannot read its upstream as configured (the message says why)."""


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


def watermark_metadata(watermark: dict[str, int]) -> str:
    """The user metadata of the commit that applies changes read up to `watermark`."""
    return json.dumps({WATERMARK_KEY: watermark}, sort_keys=True)


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


def check_on_gap(model: str, on_gap: str | None) -> str:
    on_gap = on_gap or "error"
    if on_gap not in ON_GAP_CHOICES:
        raise ChangeFeedError(
            f"Model {model}: cdf_on_gap={on_gap!r} is not one of {', '.join(ON_GAP_CHOICES)}."
        )
    return on_gap


def plan_read(
    model: str, table: str, processed: int | None, earliest: int, end: int, on_gap: str
) -> str:
    """What to read of `table` (history from version `earliest`, pinned at `end`) after the
    `processed` version: `snapshot`, `nothing` (no new version) or `changes`."""
    if processed is None:
        return SNAPSHOT
    if processed + 1 < earliest:
        if check_on_gap(model, on_gap) == "full_refresh":
            return SNAPSHOT
        raise ChangeFeedError(
            f"Model {model}: upstream {table} keeps history from version {earliest} only, but "
            f"changes after version {processed} are still to be read. Rebuild with "
            f"`dbt run --full-refresh -s {model}`, or set cdf_on_gap='full_refresh' on the model."
        )
    return "nothing" if processed >= end else "changes"


History = Callable[[str], list[tuple[int, str | None]]]


def read_plan(
    history: History, model: str, upstream: str, target: str | None, on_gap: str | None
) -> dict[str, Any]:
    """The read of one upstream for one run of a SQL model (see `cdf_changes`):
    {"table", "kind" (snapshot/nothing/changes), "start", "end"}. `history(table)` returns
    (version, userMetadata) of every commit of a table; `target` is None on a full build."""
    on_gap = check_on_gap(model, on_gap)
    key = table_key(upstream)
    versions = [version for version, _ in history(upstream)]
    end = max(versions)
    watermark = latest_watermark(history(target)) if target else None
    processed = (watermark or {}).get(key)
    kind = plan_read(model, key, processed, min(versions), end, on_gap)
    start = processed + 1 if kind == "changes" else None
    return {"table": key, "kind": kind, "start": start, "end": end}


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
    on_gap: str | None = "error"
    processed: dict[str, int] = field(default_factory=dict)
    pinned: dict[str, int] = field(default_factory=dict)
    is_snapshot: bool = False

    def __post_init__(self) -> None:
        self.on_gap = check_on_gap(self.model, self.on_gap)
        watermark = latest_watermark(self._history(self.target)) if self.target else None
        self.is_snapshot = watermark is None
        self.processed = watermark or {}

    def _history(self, table: str) -> list[tuple[int, str | None]]:
        rows = self.session.sql(f"describe history {table}").collect()
        return [(row.version, row.userMetadata) for row in rows]

    def end_version(self, table: str) -> int:
        key = table_key(table)
        if key not in self.pinned:
            self.pinned[key] = max(version for version, _ in self._history(table))
        return self.pinned[key]

    def current(self, table: str) -> DataFrame:
        """The upstream as of its pinned end version."""
        return self.session.sql(f"select * from {table} version as of {self.end_version(table)}")

    def changes(self, table: str) -> DataFrame:
        """CDF rows after the processed version up to the pinned end (empty when none), or the
        whole upstream as `snapshot` rows when this run is a snapshot."""
        from pyspark.sql import functions as F

        key = table_key(table)
        end = self.end_version(table)
        earliest = min(version for version, _ in self._history(table))
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

    def tracked_rows(self, table: str, *columns: str) -> DataFrame:
        """Row tracking, no change feed: the upstream's rows (as of the pinned end) whose
        `row_commit_version` is newer than the processed version, with their stable `row_id`;
        every row on a snapshot."""
        from pyspark.sql import functions as F

        rows = self.session.sql(
            "select _metadata.row_id as row_id, "
            "_metadata.row_commit_version as row_commit_version"
            + "".join(f", `{column}`" for column in columns)
            + f" from {table} version as of {self.end_version(table)}"
        )
        processed = None if self.is_snapshot else self.processed.get(table_key(table))
        if processed is None:
            return rows
        return rows.where(F.col("row_commit_version") > F.lit(processed))

    def watermark(self) -> dict[str, int]:
        """The watermark to commit: what was processed before, advanced to the pinned ends."""
        return {**self.processed, **self.pinned}

    def with_watermark(self, rows: DataFrame) -> DataFrame:
        """`rows` (change rows) with the watermark column the `cdf` strategy commits."""
        from pyspark.sql import functions as F

        return rows.withColumn(WATERMARK, F.lit(json.dumps(self.watermark(), sort_keys=True)))
