"""The Python models' DataFrame logic, on plain DataFrames (no Delta needed)."""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal

from lakehouse.transforms import customer_revenue


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
