"""The Python models' DataFrame logic, on plain DataFrames (no Delta needed)."""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal

from lakehouse.shop.transforms import customer_revenue, daily_revenue


def test_customer_revenue_excludes_cancelled_orders(spark):
    orders = spark.createDataFrame(
        [
            (1, 10, "paid", Decimal("5.00"), datetime(2026, 1, 1)),
            (2, 10, "cancelled", Decimal("99.00"), datetime(2026, 1, 2)),
            (3, 10, "delivered", Decimal("7.50"), datetime(2026, 1, 3)),
            (4, 20, "cancelled", Decimal("1.00"), datetime(2026, 1, 4)),
        ],
        "order_id int, customer_id int, status string, order_amount decimal(12,2), "
        "ordered_at timestamp",
    )
    rows = {r.customer_id: r for r in customer_revenue(orders).collect()}
    assert set(rows) == {10}
    assert rows[10].order_count == 2
    assert rows[10].revenue == Decimal("12.50")
    assert rows[10].first_ordered_at == datetime(2026, 1, 1)
    assert rows[10].last_ordered_at == datetime(2026, 1, 3)


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
    rows = {r.order_date: r for r in daily_revenue(lines, orders).collect()}
    assert set(rows) == {datetime(2026, 1, 1).date()}
    day = rows[datetime(2026, 1, 1).date()]
    assert (day.order_count, day.line_count, day.revenue) == (2, 2, Decimal("7.50"))
