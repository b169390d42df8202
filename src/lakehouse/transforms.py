"""DataFrame → DataFrame logic of the Python models (thin model files import these)."""

from __future__ import annotations

from pyspark.sql import DataFrame
from pyspark.sql import functions as F


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
