"""Write generated batches to the bronze (landing) Delta tables that dbt declares as sources."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from lakehouse.generator import BRONZE_SCHEMAS, CHANGE_LOG_COLUMNS, ShopGenerator, bronze_ddl_schema

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

log = logging.getLogger(__name__)
DEFAULT_BRONZE_SCHEMA = "bronze"


def create_bronze_tables(spark: SparkSession, schema: str) -> None:
    spark.sql(f"create schema if not exists `{schema}`")
    for table in BRONZE_SCHEMAS:
        spark.sql(
            f"create table if not exists `{schema}`.`{table}` ({bronze_ddl_schema(table)}) "
            "using delta"
        )


def load_batches(
    spark: SparkSession, generator: ShopGenerator, schema: str, through: int
) -> dict[int, dict[str, int]]:
    """Append batches 0..through to bronze; a batch already loaded is skipped, not duplicated.

    Each append carries Delta's idempotent-write identifiers (txnAppId/txnVersion = batch id),
    so a retried or repeated load of a batch commits nothing.
    """
    import pandas as pd

    create_bronze_tables(spark, schema)
    loaded: dict[int, dict[str, int]] = {}
    for batch_id, rows_by_table in generator.batches(through):
        counts = {}
        for table, rows in rows_by_table.items():
            if not rows:
                continue
            columns = [name for name, _ in BRONZE_SCHEMAS[table]] + CHANGE_LOG_COLUMNS
            frame = spark.createDataFrame(
                pd.DataFrame(rows, columns=columns), schema=bronze_ddl_schema(table)
            )
            (
                frame.write.format("delta")
                .mode("append")
                .option("txnAppId", f"lakehouse.bronze.{schema}.{table}")
                .option("txnVersion", batch_id)
                .saveAsTable(f"`{schema}`.`{table}`")
            )
            counts[table] = len(rows)
        loaded[batch_id] = counts
        log.info("bronze batch %s: %s", batch_id, counts)
    return loaded
