"""The change-feed protocol of the `cdf` strategy, pure (no Spark)."""

from __future__ import annotations

import json
from datetime import datetime

import pytest

from dbt.adapters.sparkdelta.change_feed import (
    WATERMARK_KEY,
    ChangeFeedError,
    Commit,
    Histories,
    check_not_restored,
    parse_watermark,
    plan_read,
    processed_watermark,
    read_plan,
    unrecorded_versions,
    upstreams_unchanged,
    watermark_metadata,
)


def commits(*rows) -> list[Commit]:
    """(version, userMetadata[, operation[, parameters]]) -> history."""
    return [Commit(*row) for row in rows]


class RecordedHistories(Histories):
    """Histories of fixed tables (newest first), recording each DESCRIBE HISTORY it would send."""

    def __init__(self, histories: dict[str, list[Commit]]) -> None:
        self.reads: list[tuple[str, int | None]] = []

        def read(table: str, limit: int | None) -> list[Commit]:
            self.reads.append((table, limit))
            return histories[table][:limit]

        super().__init__(read)


def test_watermark_is_read_from_the_newest_commit_that_has_one():
    history = commits(
        (5, None, "OPTIMIZE"),
        (4, "not json"),
        (3, json.dumps({"other": 1})),
        (2, watermark_metadata({"s.up": 4})),
        (1, watermark_metadata({"s.up": 1})),
    )
    assert processed_watermark("m", history) == {"s.up": 4}
    assert processed_watermark("m", commits((0, None))) is None
    assert parse_watermark(json.dumps({WATERMARK_KEY: "4"})) is None


def test_a_restore_sends_the_watermark_back_to_the_restored_version():
    history = commits(
        (4, None, "RESTORE", {"version": "1", "timestamp": None}),
        (3, watermark_metadata({"s.up": 9})),
        (2, watermark_metadata({"s.up": 7})),
        (1, watermark_metadata({"s.up": 5})),
    )
    assert processed_watermark("m", history) == {"s.up": 5}
    # restored to a version before any watermark: the next run is a snapshot
    to_start = commits(
        (4, None, "RESTORE", {"version": "0"}),
        *[(c.version, c.user_metadata) for c in history[1:]],
        (0, None, "CREATE TABLE"),
    )
    assert processed_watermark("m", to_start) is None


def test_a_restore_to_a_timestamp_uses_the_newest_commit_at_or_before_it():
    at = [datetime(2026, 1, 1, 0, minute) for minute in range(4)]
    history = [
        Commit(3, None, "RESTORE", {"version": None, "timestamp": "2026-01-01 00:01:30"}, at[3]),
        Commit(2, watermark_metadata({"s.up": 9}), "MERGE", {}, at[2]),
        Commit(1, watermark_metadata({"s.up": 5}), "MERGE", {}, at[1]),
        Commit(0, None, "CREATE TABLE", {}, at[0]),
    ]
    assert processed_watermark("m", history) == {"s.up": 5}


def test_a_clone_or_replace_after_the_watermark_is_an_error_naming_the_model():
    for operation in ("CLONE", "CREATE OR REPLACE TABLE AS SELECT", "TRUNCATE"):
        history = commits((3, None, operation), (2, watermark_metadata({"s.up": 4})))
        with pytest.raises(ChangeFeedError, match=rf"Model m: .*{operation}.*--full-refresh -s m"):
            processed_watermark("m", history)
    # a table that starts as a clone has nothing to contradict: the next run is a snapshot
    assert processed_watermark("m", commits((1, None, "OPTIMIZE"), (0, None, "CLONE"))) is None


def test_row_tracking_refuses_an_upstream_restored_after_the_processed_version():
    history = commits((6, None, "RESTORE", {"version": "2"}), (5, None, "MERGE"))
    check_not_restored("m", "s.up", 6, history)  # processed the restore already
    with pytest.raises(ChangeFeedError, match=r"Model m: upstream s\.up was restored"):
        check_not_restored("m", "s.up", 5, history)


def test_plan_read_decides_snapshot_nothing_or_changes():
    assert plan_read("m", "s.t", None, 0, 5, "error") == "snapshot"
    assert plan_read("m", "s.t", 5, 0, 5, "error") == "nothing"
    assert plan_read("m", "s.t", 3, 0, 5, "error") == "changes"
    assert plan_read("m", "s.t", 3, 10, 12, "full_refresh") == "snapshot"
    with pytest.raises(ChangeFeedError, match=r"Model m: upstream s\.t .*--full-refresh -s m"):
        plan_read("m", "s.t", 3, 10, 12, "error")


CDF_OFF = {"properties": json.dumps({"delta.enableChangeDataFeed": "false"})}
CDF_ON = {"properties": json.dumps({"delta.enableChangeDataFeed": "true"})}


def test_versions_written_with_the_change_feed_off_are_found_in_the_history():
    # off at 16, a batch at 17, on again at 18 (the sequence): Delta refuses 16..18
    history = commits(
        (15, None, "WRITE"), (16, None, "SET TBLPROPERTIES", CDF_OFF), (17, None, "WRITE"),
        (18, None, "SET TBLPROPERTIES", CDF_ON), (19, None, "WRITE"),
    )  # fmt: skip
    assert unrecorded_versions(history, processed=15, end=19) == (16, 17)
    assert unrecorded_versions(history, processed=18, end=19) is None
    # switched off and never on again: every later version lacks change data
    assert unrecorded_versions(history[:3], processed=14, end=17) == (16, 17)
    # a replace without the property switches it off; UNSET too
    replaced = commits(
        (3, None, "CREATE OR REPLACE TABLE AS SELECT", {"properties": "{}"}), (4, None, "WRITE")
    )
    assert unrecorded_versions(replaced, processed=2, end=4) == (3, 4)
    unset = commits(
        (3, None, "UNSET TBLPROPERTIES", {"propertyKeys": "delta.enableChangeDataFeed"})
    )
    assert unrecorded_versions(unset, processed=2, end=3) == (3, 3)
    # properties that leave the feed alone
    other = commits(
        (3, None, "SET TBLPROPERTIES", {"properties": '{"a": "b"}'}), (4, None, "WRITE")
    )
    assert unrecorded_versions(other, processed=2, end=4) is None


def test_a_change_feed_gap_names_the_versions_and_the_full_refresh():
    with pytest.raises(ChangeFeedError) as raised:
        plan_read("m", "s.t", 15, 0, 19, "error", unrecorded=(16, 17))
    assert str(raised.value) == (
        "Model m: upstream s.t has no change data for versions 16 to 17: its change data feed "
        "(delta.enableChangeDataFeed) was off while they were written, but its changes after "
        "version 15 are still to be read. Rebuild with `dbt run --full-refresh -s m` (it reads "
        "s.t whole), or set cdf_on_gap='full_refresh' on the model."
    )
    assert plan_read("m", "s.t", 15, 0, 19, "full_refresh", unrecorded=(16, 17)) == "snapshot"


def test_read_plan_refuses_a_range_without_change_data():
    histories = {
        "`s`.`up`": commits(
            (7, None, "WRITE"), (6, None, "SET TBLPROPERTIES", CDF_OFF), (5, None, "WRITE")
        ),
        "`s`.`me`": commits(
            (2, watermark_metadata({"s.up": 5})),
        ),
    }
    with pytest.raises(ChangeFeedError, match=r"no change data for versions 6 to 7"):
        read_plan(RecordedHistories(histories), "me", "`s`.`up`", "`s`.`me`", None)


def test_read_plan_of_a_sql_model_starts_after_the_target_watermark():
    histories = {
        "`s`.`up`": commits((7, None), (6, None), (5, None)),
        "`s`.`me`": commits((2, watermark_metadata({"s.up": 5})), (1, None)),
    }
    plan = read_plan(RecordedHistories(histories), "me", "`s`.`up`", "`s`.`me`", None)
    assert plan == {
        "table": "s.up", "kind": "changes", "start": 6, "end": 7, "appends_only": False
    }  # fmt: skip
    first = read_plan(RecordedHistories(histories), "me", "`s`.`up`", None, "error")
    assert first == {
        "table": "s.up", "kind": "snapshot", "start": None, "end": 7, "appends_only": False
    }  # fmt: skip


def test_read_plan_says_when_every_commit_it_reads_only_appended():
    append = ("WRITE", {"mode": "Append"})
    up = {
        "appends": commits((7, None, *append), (6, None, "STREAMING UPDATE", {}, None, True)),
        "a merge": commits((7, None, *append), (6, None, "MERGE")),
        "an overwrite": commits((7, None, "WRITE", {"mode": "Overwrite"}), (6, None, *append)),
    }
    # commits before the range do not count
    older = commits((5, None, "DELETE"), (4, None))
    watermarked = commits((2, watermark_metadata({"s.up": 5})))
    only = {}
    for name, newer in up.items():
        histories = RecordedHistories({"`s`.`up`": newer + older, "`s`.`me`": watermarked})
        only[name] = read_plan(histories, "me", "`s`.`up`", "`s`.`me`", None)["appends_only"]
    assert only == {"appends": True, "a merge": False, "an overwrite": False}


def test_a_history_row_says_whether_its_commit_was_a_blind_append():
    row = {"version": 3, "operation": "WRITE", "operationParameters": {"mode": "Overwrite"}}
    # a map and a boolean from Spark, JSON text and a string through the Thrift endpoint
    assert Commit.from_row({**row, "isBlindAppend": True}).appends_only
    assert Commit.from_row({**row, "isBlindAppend": "true"}).appends_only
    assert not Commit.from_row({**row, "isBlindAppend": False}).appends_only
    thrift = {**row, "operationParameters": '{"mode": "Append"}', "isBlindAppend": "false"}
    assert Commit.from_row(thrift).appends_only


def test_whole_histories_are_read_only_when_the_newest_commit_does_not_decide():
    up = commits((7, None), (6, None), (5, None))
    watermarked = commits((2, watermark_metadata({"s.up": 7})), (1, None))
    # nothing new: the newest commit of each table is all that is read
    recorded = RecordedHistories({"`s`.`up`": up, "`s`.`me`": watermarked})
    plan = read_plan(recorded, "me", "`s`.`up`", "`s`.`me`", None)
    assert plan["kind"] == "nothing"
    assert recorded.reads == [("`s`.`up`", 1), ("`s`.`me`", 1)]
    # the target's newest commit has no watermark (an OPTIMIZE since): its whole history
    optimized = commits((3, None, "OPTIMIZE"), *[(c.version, c.user_metadata) for c in watermarked])
    recorded = RecordedHistories({"`s`.`up`": up, "`s`.`me`": optimized})
    assert recorded.watermark("me", "`s`.`me`") == {"s.up": 7}
    assert recorded.reads == [("`s`.`me`", 1), ("`s`.`me`", None)]
    # changes to read: the upstream's whole history, for the oldest version it still has
    behind = commits((2, watermark_metadata({"s.up": 5})))
    recorded = RecordedHistories({"`s`.`up`": up, "`s`.`me`": behind})
    assert read_plan(recorded, "me", "`s`.`up`", "`s`.`me`", None)["start"] == 6
    assert ("`s`.`up`", None) in recorded.reads


def test_upstreams_are_unchanged_only_when_every_one_is_watermarked_and_current():
    tables = {
        "`s`.`a`": commits((4, None)),
        "`s`.`b`": commits((9, None)),
    }
    current = {"s.a": 4, "s.b": 9}
    assert upstreams_unchanged(RecordedHistories(tables), current, ["`s`.`a`", "`s`.`b`"])
    # a declared upstream the change feed never read, or none declared: run the model
    assert not upstreams_unchanged(RecordedHistories(tables), {"s.a": 4}, ["`s`.`a`", "`s`.`b`"])
    assert not upstreams_unchanged(RecordedHistories(tables), current, [])
    # no watermark (first run, or a table written otherwise): run the model
    assert not upstreams_unchanged(RecordedHistories(tables), None, ["`s`.`a`"])
    # a commit after the processed version of any table of the watermark, declared or not
    assert not upstreams_unchanged(RecordedHistories(tables), {"s.a": 4, "s.b": 8}, ["`s`.`a`"])


def test_unknown_on_gap_is_refused_with_the_model_named():
    with pytest.raises(ChangeFeedError, match="Model me: cdf_on_gap='sometimes'"):
        read_plan(RecordedHistories({}), "me", "`s`.`up`", None, "sometimes")
