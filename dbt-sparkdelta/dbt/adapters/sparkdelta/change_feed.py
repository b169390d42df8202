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
`ChangeFeed`. Both read the watermark the same way (`processed_watermark`): from the newest
commit of the target that carries one, following a RESTORE of the target back to the version
it restored; a CLONE, REPLACE or TRUNCATE of the target by anything but the model is an error
that names the model and the `--full-refresh` to run.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

from dbt.adapters.sparkdelta.timestamps import as_session_shows

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

CHANGE_TYPE = "_change_type"
COMMIT_VERSION = "_commit_version"
COMMIT_TIMESTAMP = "_commit_timestamp"
WATERMARK = "_cdf_watermark"
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


@dataclass(frozen=True)
class Commit:
    """What the protocol needs of one DESCRIBE HISTORY row."""

    version: int
    user_metadata: str | None = None
    operation: str = ""
    parameters: Mapping[str, Any] = field(default_factory=dict)
    timestamp: datetime | None = None
    blind_append: bool = False  # Delta's isBlindAppend: only files added, none read

    @classmethod
    def from_row(cls, row: Mapping[str, Any]) -> Commit:
        timestamp = row.get("timestamp")
        return cls(
            version=int(row["version"]),
            user_metadata=row.get("userMetadata"),
            operation=str(row.get("operation") or ""),
            parameters=_as_mapping(row.get("operationParameters")),
            timestamp=timestamp if isinstance(timestamp, datetime) else _parse_time(timestamp),
            blind_append=str(row.get("isBlindAppend")).lower() == "true",
        )

    @property
    def appends_only(self) -> bool:
        """The commit only added rows (its change feed holds inserts alone): a blind append,
        or any append-mode write (INSERT INTO, a DataFrame append), which reads the table
        perhaps but never removes a file."""
        return self.blind_append or (
            self.operation == "WRITE" and self.parameters.get("mode") == "Append"
        )


def _as_mapping(value: Any) -> Mapping[str, Any]:
    """operationParameters: a map from Spark, JSON text from the Thrift endpoint."""
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            return {}
    return value if isinstance(value, Mapping) else {}


def _parse_time(value: Any) -> datetime | None:
    try:
        return datetime.fromisoformat(str(value).strip()) if value else None
    except ValueError:
        return None


# Operations that put other data in a table than the model's own writes: after one of them
# (with no watermark of its own), the watermark of an earlier commit no longer describes it.
REPLACING_OPERATIONS = ("CLONE", "REPLACE", "TRUNCATE")


def _replaces_data(commit: Commit) -> bool:
    return any(operation in commit.operation for operation in REPLACING_OPERATIONS)


def restored_version(commit: Commit, history: Iterable[Commit]) -> int | None:
    """The version a RESTORE commit brought the table back to (it names a version or a
    timestamp; a timestamp means the newest commit at or before it)."""
    if commit.parameters.get("version") not in (None, ""):
        return int(commit.parameters["version"])
    restored_at = _parse_time(commit.parameters.get("timestamp"))
    if restored_at is None:
        return None
    earlier = [c.version for c in history if c.timestamp and c.timestamp <= restored_at]
    return max(earlier, default=None)


def processed_watermark(model: str, history: Iterable[Commit]) -> dict[str, int] | None:
    """The upstream versions the table's current data reflects: the watermark of the newest
    commit that carries one, where a RESTORE sends the search back to the version it restored
    (so the next run catches up from there). A CLONE, REPLACE or TRUNCATE without a watermark
    after the watermarked commit means the data is no longer the model's: an error."""
    commits = sorted(history, key=lambda commit: commit.version, reverse=True)
    restored_to: int | None = None
    replaced_by: Commit | None = None
    for commit in commits:
        if restored_to is not None and commit.version > restored_to:
            continue  # undone by the RESTORE
        watermark = parse_watermark(commit.user_metadata)
        if watermark is not None:
            if replaced_by is not None:
                raise ChangeFeedError(
                    f"Model {model}: its table was replaced by {replaced_by.operation} at "
                    f"version {replaced_by.version}, after the version its change feed was last "
                    f"applied at ({commit.version}), so its data no longer matches what it "
                    f"processed. Rebuild it with `dbt run --full-refresh -s {model}`."
                )
            return watermark
        if commit.operation == "RESTORE":
            restored_to = restored_version(commit, commits)
            if restored_to is None:
                raise ChangeFeedError(
                    f"Model {model}: its table was restored at version {commit.version} to a "
                    f"point its history does not show. Rebuild it with "
                    f"`dbt run --full-refresh -s {model}`."
                )
        elif replaced_by is None and _replaces_data(commit):
            replaced_by = commit
    return None


def check_not_restored(model: str, table: str, processed: int, history: Iterable[Commit]) -> None:
    """Row tracking cannot see rows a RESTORE of the upstream brought back (they keep their
    old row commit version): after one, only a rebuild is right."""
    for commit in history:
        if commit.version > processed and commit.operation == "RESTORE":
            raise ChangeFeedError(
                f"Model {model}: upstream {table} was restored at version {commit.version}, "
                f"after the version this model processed ({processed}); row tracking cannot "
                f"tell which rows came back. Rebuild it with `dbt run --full-refresh -s {model}`."
            )


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
    model: str,
    table: str,
    processed: int | None,
    earliest: int,
    end: int,
    on_gap: str,
    unrecorded: tuple[int, int] | None = None,
) -> str:
    """What to read of `table` (history from version `earliest`, pinned at `end`) after the
    `processed` version: `snapshot`, `nothing` (no new version) or `changes`. `unrecorded`:
    the versions of that range written while the change data feed was off (unrecorded_versions)."""
    if processed is None:
        return SNAPSHOT
    if processed >= end:
        return "nothing"
    gap = None
    if processed + 1 < earliest:
        gap = f"keeps history from version {earliest} only"
    elif unrecorded is not None:
        first, last = unrecorded
        gap = (
            f"has no change data for versions {first} to {last}: its change data feed "
            f"({CHANGE_FEED_PROPERTY}) was off while they were written"
        )
    if gap is None:
        return "changes"
    if check_on_gap(model, on_gap) == "full_refresh":
        return SNAPSHOT
    raise ChangeFeedError(
        f"Model {model}: upstream {table} {gap}, but its changes after version {processed} are "
        f"still to be read. Rebuild with `dbt run --full-refresh -s {model}` (it reads {table} "
        f"whole), or set cdf_on_gap='full_refresh' on the model."
    )


CHANGE_FEED_PROPERTY = "delta.enableChangeDataFeed"


def _change_feed_switch(commit: Commit) -> bool | None:
    """True / False when the commit switched the change data feed on / off (a CREATE, REPLACE,
    SET or UNSET TBLPROPERTIES naming it), None when it left it as it was."""
    properties = _as_mapping(commit.parameters.get("properties"))
    if CHANGE_FEED_PROPERTY in properties:
        return str(properties[CHANGE_FEED_PROPERTY]).strip().lower() == "true"
    if "UNSET" in commit.operation and CHANGE_FEED_PROPERTY in str(
        commit.parameters.get("propertyKeys", "")
    ):
        return False
    if "properties" in commit.parameters and commit.operation.startswith(("CREATE", "REPLACE")):
        return False  # a new table definition whose properties leave the feed out
    return None


def unrecorded_versions(
    history: Iterable[Commit], processed: int, end: int
) -> tuple[int, int] | None:
    """The first and last versions in (processed, end] that Delta's change feed cannot return
    because it was off (table_changes fails on them with DELTA_MISSING_CHANGE_DATA): from the
    first version whose table had the feed off to the last such version. The feed is taken as
    on at `processed` (the model read it up to there), then followed through the commits."""
    enabled, first, last = True, None, None
    for commit in sorted(history, key=lambda commit: commit.version):
        if commit.version <= processed or commit.version > end:
            continue
        switch = _change_feed_switch(commit)
        if switch is not None:
            enabled = switch
        if not enabled:
            first = commit.version if first is None else first
            last = commit.version
    return None if first is None else (first, last)


def describe_history_sql(table: str, limit: int | None = None) -> str:
    return f"describe history {table}" + (f" limit {limit}" if limit else "")


class Histories:
    """DESCRIBE HISTORY of tables for one decision, each read at most once: the newest commit
    alone (`LIMIT 1`: Delta reads one commit file) until the whole history is needed (every
    commit file in the log's retention, which grows with each run of a model).
    `read(table, limit)` returns commits newest first."""

    def __init__(self, read: Callable[[str, int | None], list[Commit]]) -> None:
        self._read = read
        self._newest: dict[str, Commit] = {}
        self._all: dict[str, list[Commit]] = {}

    def newest(self, table: str) -> Commit:
        if table in self._all:
            return self._all[table][0]
        if table not in self._newest:
            self._newest[table] = self._read(table, 1)[0]
        return self._newest[table]

    def all(self, table: str) -> list[Commit]:
        if table not in self._all:
            self._all[table] = sorted(self._read(table, None), key=lambda c: -c.version)
        return self._all[table]

    def watermark(self, model: str, table: str) -> dict[str, int] | None:
        """processed_watermark of `table`, from its newest commit alone when that commit
        carries the watermark (the usual case: the model's own last write)."""
        watermark = parse_watermark(self.newest(table).user_metadata)
        if watermark is not None:
            return watermark
        return processed_watermark(model, self.all(table))


def upstreams_unchanged(
    histories: Histories, watermark: dict[str, int] | None, upstreams: Iterable[str]
) -> bool:
    """True when a run of a `cdf` model would read nothing new: its target has a watermark,
    every upstream it declares is in it, and no table of the watermark has a commit after the
    version processed. A model that reads a table it neither declares (ref, source) nor reads
    through the change feed is outside what this can see."""
    if not watermark:
        return False
    declared = [table_key(upstream) for upstream in upstreams]
    if not declared or any(key not in watermark for key in declared):
        return False
    return all(
        histories.newest(quoted_key(key)).version <= version for key, version in watermark.items()
    )


def quoted_key(key: str) -> str:
    """schema.table (a watermark key) -> `schema`.`table`."""
    return ".".join(f"`{part}`" for part in key.split(".", 1))


def read_plan(
    histories: Histories, model: str, upstream: str, target: str | None, on_gap: str | None
) -> dict[str, Any]:
    """The read of one upstream for one run of a SQL model (see `cdf_changes`):
    {"table", "kind" (snapshot/nothing/changes), "start", "end", "appends_only" (every commit
    read only added rows)}; `target` is None on a full build. The upstream's whole history is
    read only when there are changes to read (for the oldest version it still has)."""
    on_gap = check_on_gap(model, on_gap)
    key = table_key(upstream)
    end = histories.newest(upstream).version
    watermark = histories.watermark(model, target) if target else None
    processed = (watermark or {}).get(key)
    earliest = earliest_to_check(histories, upstream, processed, end)
    kind = plan_read(
        model,
        key,
        processed,
        earliest,
        end,
        on_gap,
        unrecorded(histories, upstream, processed, end),
    )
    start = processed + 1 if kind == "changes" else None
    appends_only = kind == "changes" and all(
        commit.appends_only for commit in histories.all(upstream) if start <= commit.version <= end
    )
    return {"table": key, "kind": kind, "start": start, "end": end, "appends_only": appends_only}


def earliest_to_check(histories: Histories, table: str, processed: int | None, end: int) -> int:
    """The oldest version `table` still has, for plan_read's gap check: read from its whole
    history only when there are changes after `processed` to read (else `end` serves)."""
    if processed is None or processed >= end:
        return end
    return min(commit.version for commit in histories.all(table))


def unrecorded(
    histories: Histories, table: str, processed: int | None, end: int
) -> tuple[int, int] | None:
    """unrecorded_versions of `table` after `processed`, from its whole history, read only when
    there are changes to read (the history earliest_to_check reads then too)."""
    if processed is None or processed >= end:
        return None
    return unrecorded_versions(histories.all(table), processed, end)


def state_before(rows: DataFrame, changes: DataFrame, key: str) -> DataFrame:
    """`rows` of an upstream (as of the pinned end version, any subset that holds every current
    row of the keys `changes` touch) as they were at the processed version, without reading
    the upstream at that version: each key with a change row is replaced by its state before
    its first change in `changes` (the pre-image or delete row of its oldest commit), or
    dropped when that change inserted it. `key` must be unique in the upstream; NULL is a key
    like any other. Wrong on a snapshot run (it has no change rows)."""
    from pyspark.sql import functions as F

    first = changes.groupBy(F.col(key).alias("_first_key")).agg(
        F.min(COMMIT_VERSION).alias("_first_version")
    )
    same_key = F.col(key).eqNullSafe(F.col("_first_key"))
    before = (
        changes.join(first, same_key)
        .where(
            (F.col(COMMIT_VERSION) == F.col("_first_version"))
            & F.col(CHANGE_TYPE).isin("update_preimage", "delete")
        )
        .select(*rows.columns)
    )
    unchanged = rows.join(first, same_key, "left_anti")
    return unchanged.unionByName(before)


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
        self.histories = Histories(self._read_history)
        watermark = self.histories.watermark(self.model, self.target) if self.target else None
        self.is_snapshot = watermark is None
        self.processed = watermark or {}

    def _read_history(self, table: str, limit: int | None) -> list[Commit]:
        frame = self.session.sql(describe_history_sql(table, limit))
        # commit times in the session's zone, as a RESTORE's timestamp names them
        rows = as_session_shows(frame, frame.collect())
        return [Commit.from_row(row.asDict()) for row in rows]

    def end_version(self, table: str) -> int:
        key = table_key(table)
        if key not in self.pinned:
            self.pinned[key] = self.histories.newest(table).version
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
        start = None if self.is_snapshot else self.processed.get(key)
        earliest = earliest_to_check(self.histories, table, start, end)
        gap = unrecorded(self.histories, table, start, end)
        read = plan_read(self.model, key, start, earliest, end, self.on_gap, gap)
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

    def tracked_rows(self, table: str, *columns: str, changed_only: bool = True) -> DataFrame:
        """Row tracking, no change feed: the upstream's rows (as of the pinned end) whose
        `row_commit_version` is newer than the processed version, with their stable `row_id`;
        every row on a snapshot or with `changed_only=False`."""
        from pyspark.sql import functions as F

        rows = self.session.sql(
            "select _metadata.row_id as row_id, "
            "_metadata.row_commit_version as row_commit_version"
            + "".join(f", `{column}`" for column in columns)
            + f" from {table} version as of {self.end_version(table)}"
        )
        processed = None if self.is_snapshot else self.processed.get(table_key(table))
        if processed is None or not changed_only:
            return rows
        if processed < self.end_version(table):
            check_not_restored(self.model, table_key(table), processed, self.histories.all(table))
        return rows.where(F.col("row_commit_version") > F.lit(processed))

    def watermark(self) -> dict[str, int]:
        """The watermark to commit: what was processed before, advanced to the pinned ends."""
        return {**self.processed, **self.pinned}

    def with_watermark(self, rows: DataFrame) -> DataFrame:
        """`rows` (change rows) with the watermark column the `cdf` strategy commits."""
        from pyspark.sql import functions as F

        return rows.withColumn(WATERMARK, F.lit(json.dumps(self.watermark(), sort_keys=True)))
