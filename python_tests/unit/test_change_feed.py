"""The change-feed and row-tracking logic on plain DataFrames (no Delta runtime)."""

from __future__ import annotations

import json
from datetime import datetime
from decimal import Decimal

import pytest

from lakehouse.change_feed import (
    ChangeFeedGap,
    apply_net_changes,
    changed_rows,
    daily_revenue,
    daily_revenue_changes,
    latest_watermark,
    net_changes,
    parse_watermark,
    plan_read,
    row_lineage,
    update_row_lineage,
)

CHANGES = "k int, v string, _change_type string, _commit_version bigint"


def by_key(df, key="k"):
    return {row[key]: row for row in df.collect()}


def test_net_changes_keeps_the_last_change_of_each_key(spark):
    changes = spark.createDataFrame(
        [
            # inserted, then updated twice: the last post-image
            (1, "a", "insert", 1),
            (1, "a", "update_preimage", 2),
            (1, "b", "update_postimage", 2),
            (1, "b", "update_preimage", 3),
            (1, "c", "update_postimage", 3),
            # deleted, then inserted again: present
            (2, "x", "delete", 1),
            (2, "y", "insert", 4),
            # updated, then deleted: a delete
            (3, "p", "update_preimage", 1),
            (3, "q", "update_postimage", 1),
            (3, "q", "delete", 5),
            # deleted and inserted by one commit: present
            (4, "old", "delete", 6),
            (4, "new", "insert", 6),
        ],
        CHANGES,
    )
    net = by_key(net_changes(changes, ["k"]))
    assert {k: (r.v, r._change_type) for k, r in net.items()} == {
        1: ("c", "update_postimage"),
        2: ("y", "insert"),
        3: ("q", "delete"),
        4: ("new", "insert"),
    }


def test_net_changes_needs_a_key(spark):
    with pytest.raises(ValueError, match="key"):
        net_changes(spark.createDataFrame([], CHANGES), [])


def test_apply_net_changes_inserts_updates_and_deletes(spark):
    current = spark.createDataFrame([(1, "a"), (2, "b"), (3, "c")], "k int, v string")
    changes = spark.createDataFrame(
        [(1, "a2", "update_postimage", 7), (2, "b", "delete", 7), (9, "z", "insert", 7)],
        CHANGES,
    )
    result = apply_net_changes(current, net_changes(changes, ["k"]), ["k"])
    assert sorted(map(tuple, result.collect())) == [(1, "a2"), (3, "c"), (9, "z")]


def test_watermark_is_read_from_the_newest_commit_that_has_one():
    mark = {"lakehouse_cdf_watermark": {"s.up": 4}}
    history = [
        (5, None),  # e.g. an OPTIMIZE after the last run
        (4, "not json"),
        (3, json.dumps({"other": 1})),
        (2, json.dumps(mark)),
        (1, json.dumps({"lakehouse_cdf_watermark": {"s.up": 1}})),
    ]
    assert latest_watermark(history) == {"s.up": 4}
    assert latest_watermark([(0, None)]) is None
    assert parse_watermark(json.dumps({"lakehouse_cdf_watermark": "4"})) is None


def test_plan_read_decides_snapshot_nothing_or_changes():
    assert plan_read("m", "s.t", None, 0, 5, "error") == "snapshot"
    assert plan_read("m", "s.t", 5, 0, 5, "error") == "nothing"
    assert plan_read("m", "s.t", 3, 0, 5, "error") == "changes"
    assert plan_read("m", "s.t", 3, 10, 12, "full_refresh") == "snapshot"
    with pytest.raises(ChangeFeedGap, match=r"Model m: upstream s\.t .*--full-refresh -s m"):
        plan_read("m", "s.t", 3, 10, 12, "error")


def test_changed_rows_selects_rows_newer_than_the_processed_version(spark):
    rows = spark.createDataFrame(
        [(0, 10, 1), (1, 11, 3), (2, 12, 4)], "row_id bigint, order_id int, row_commit_version int"
    )
    assert {r.row_id for r in changed_rows(rows, 3).collect()} == {2}
    assert {r.row_id for r in changed_rows(rows, None).collect()} == {0, 1, 2}


def test_row_lineage_run_by_run_equals_the_full_recompute(spark):
    schema = "row_id bigint, order_id int, row_commit_version bigint"
    runs = [
        [(0, 10, 1), (1, 11, 1)],
        [(0, 10, 3), (1, 11, 1), (2, 12, 3)],  # row 0 updated, row 2 new
        [(0, 10, 3), (2, 12, 5)],  # row 1 gone (physically deleted), row 2 updated
    ]
    lineage = spark.createDataFrame(
        [],
        "row_id bigint, order_id int, first_seen_version bigint, last_changed_version bigint, "
        "change_count bigint",
    )
    processed, observations = None, []
    for run in runs:
        snapshot = spark.createDataFrame(run, schema)
        changed = update_row_lineage(lineage, changed_rows(snapshot, processed), "order_id")
        lineage = apply_net_changes(lineage, net_changes(changed, ["row_id"]), ["row_id"])
        processed = max(row[2] for row in run)
        observations += run
    expected = row_lineage(spark.createDataFrame(observations, schema), "order_id")
    assert sorted(map(tuple, lineage.select(*expected.columns).collect())) == sorted(
        map(tuple, expected.collect())
    )
    assert by_key(expected, "row_id")[0].change_count == 2
    assert by_key(expected, "row_id")[1].change_count == 1


LINES = "order_line_id int, order_id int, line_amount decimal(12,2), is_deleted boolean"
ORDERS = "order_id int, status string, ordered_at timestamp, is_deleted boolean"


def test_daily_revenue_counts_live_lines_of_live_non_cancelled_orders(spark):
    orders = spark.createDataFrame(
        [
            (1, "paid", datetime(2026, 1, 1, 9), False),
            (2, "cancelled", datetime(2026, 1, 1, 10), False),
            (3, "paid", datetime(2026, 1, 2, 9), True),
            (4, "placed", datetime(2026, 1, 1, 23), False),
        ],
        ORDERS,
    )
    lines = spark.createDataFrame(
        [
            (10, 1, Decimal("5.00"), False),
            (11, 1, Decimal("1.00"), True),
            (12, 2, Decimal("7.00"), False),
            (13, 3, Decimal("9.00"), False),
            (14, 4, Decimal("2.50"), False),
        ],
        LINES,
    )
    rows = by_key(daily_revenue(lines, orders), "order_date")
    assert set(rows) == {datetime(2026, 1, 1).date()}
    day = rows[datetime(2026, 1, 1).date()]
    assert (day.order_count, day.line_count, day.revenue) == (2, 2, Decimal("7.50"))


def test_daily_revenue_changes_recompute_only_touched_dates(spark):
    """Applying the change rows to the old aggregate gives the full recompute of the new state,
    for a line moved to another order, a cancelled order and an order arriving late."""
    day = [datetime(2026, 1, d, 12) for d in range(1, 5)]
    old_orders = [
        (1, "paid", day[0], False),
        (2, "paid", day[1], False),
        (4, "paid", day[3], False),
    ]
    old_lines = [(10, 1, Decimal("5.00"), False), (11, 2, Decimal("3.00"), False),
                 (12, 4, Decimal("4.00"), False), (13, 3, Decimal("8.00"), False)]  # fmt: skip
    new_orders = [
        (1, "paid", day[0], False),
        (2, "cancelled", day[1], False),  # cancelled: day 2 loses its revenue
        (3, "paid", day[2], False),  # late order: its line 13 counts from now on
        (4, "paid", day[3], False),
    ]
    new_lines = [(10, 4, Decimal("5.00"), False), (11, 2, Decimal("3.00"), False),  # 10 moved
                 (12, 4, Decimal("4.00"), False), (13, 3, Decimal("8.00"), False)]  # fmt: skip
    order_changes = spark.createDataFrame(
        [
            (2, "paid", day[1], False, "update_preimage", 2),
            (2, "cancelled", day[1], False, "update_postimage", 2),
            (3, "paid", day[2], False, "insert", 3),
        ],
        ORDERS + ", _change_type string, _commit_version bigint",
    )
    line_changes = spark.createDataFrame(
        [
            (10, 1, Decimal("5.00"), False, "update_preimage", 2),
            (10, 4, Decimal("5.00"), False, "update_postimage", 2),
        ],
        LINES + ", _change_type string, _commit_version bigint",
    )
    lines_now = spark.createDataFrame(new_lines, LINES)
    orders_now = spark.createDataFrame(new_orders, ORDERS)
    previous = daily_revenue(spark.createDataFrame(old_lines, LINES),
                             spark.createDataFrame(old_orders, ORDERS))  # fmt: skip
    changes = daily_revenue_changes(line_changes, order_changes, lines_now, orders_now)
    assert {r.order_date.day for r in changes.collect()} == {1, 2, 3, 4}
    result = apply_net_changes(previous, net_changes(changes, ["order_date"]), ["order_date"])
    expected = daily_revenue(lines_now, orders_now)
    assert sorted(map(tuple, result.collect())) == sorted(map(tuple, expected.collect()))
    assert 1 not in {r.order_date.day for r in result.collect()}  # day 1 lost its only line
