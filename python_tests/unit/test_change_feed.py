"""The change-feed protocol of the `cdf` strategy, pure (no Spark)."""

from __future__ import annotations

import json

import pytest

from dbt.adapters.sparkdelta.change_feed import (
    WATERMARK_KEY,
    ChangeFeedError,
    latest_watermark,
    parse_watermark,
    plan_read,
    read_plan,
    watermark_metadata,
)


def test_watermark_is_read_from_the_newest_commit_that_has_one():
    history = [
        (5, None),  # e.g. an OPTIMIZE after the last run
        (4, "not json"),
        (3, json.dumps({"other": 1})),
        (2, watermark_metadata({"s.up": 4})),
        (1, watermark_metadata({"s.up": 1})),
    ]
    assert latest_watermark(history) == {"s.up": 4}
    assert latest_watermark([(0, None)]) is None
    assert parse_watermark(json.dumps({WATERMARK_KEY: "4"})) is None


def test_plan_read_decides_snapshot_nothing_or_changes():
    assert plan_read("m", "s.t", None, 0, 5, "error") == "snapshot"
    assert plan_read("m", "s.t", 5, 0, 5, "error") == "nothing"
    assert plan_read("m", "s.t", 3, 0, 5, "error") == "changes"
    assert plan_read("m", "s.t", 3, 10, 12, "full_refresh") == "snapshot"
    with pytest.raises(ChangeFeedError, match=r"Model m: upstream s\.t .*--full-refresh -s m"):
        plan_read("m", "s.t", 3, 10, 12, "error")


def test_read_plan_of_a_sql_model_starts_after_the_target_watermark():
    histories = {
        "`s`.`up`": [(7, None), (6, None), (5, None)],
        "`s`.`me`": [(2, watermark_metadata({"s.up": 5})), (1, None)],
    }
    plan = read_plan(histories.__getitem__, "me", "`s`.`up`", "`s`.`me`", None)
    assert plan == {"table": "s.up", "kind": "changes", "start": 6, "end": 7}
    first = read_plan(histories.__getitem__, "me", "`s`.`up`", None, "error")
    assert first == {"table": "s.up", "kind": "snapshot", "start": None, "end": 7}


def test_unknown_on_gap_is_refused_with_the_model_named():
    with pytest.raises(ChangeFeedError, match="Model me: cdf_on_gap='sometimes'"):
        read_plan(lambda table: [(0, None)], "me", "`s`.`up`", None, "sometimes")
