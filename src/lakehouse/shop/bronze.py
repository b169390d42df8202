"""Write generated batches to the bronze (landing) Delta tables that dbt declares as sources."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

import pyarrow as pa

from dbt.adapters.sparkdelta.retry import run_with_retry
from lakehouse.shop.generator import (
    BRONZE_SCHEMAS,
    ShopGenerator,
    bronze_columns,
    bronze_ddl_schema,
)

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

log = logging.getLogger(__name__)
DEFAULT_BRONZE_SCHEMA = "bronze"


def _arrow_type(sql_type: str) -> pa.DataType:
    if sql_type.startswith("decimal("):
        precision, scale = sql_type[len("decimal(") : -1].split(",")
        return pa.decimal128(int(precision), int(scale))
    return {
        "bigint": pa.int64(),
        "int": pa.int32(),
        "string": pa.string(),
        "timestamp": pa.timestamp("us", tz="UTC"),
    }[sql_type]


def arrow_schema(table: str) -> pa.Schema:
    """Arrow schema of a bronze table: rows go to Spark through Arrow, nulls and all."""
    return pa.schema([(name, _arrow_type(sql_type)) for name, sql_type in bronze_columns(table)])


# The change-driven silver models read bronze by Delta version through its change data feed.
CHANGE_FEED = "delta.enableChangeDataFeed"


def create_bronze_tables(spark: SparkSession, schema: str) -> None:
    """The bronze tables with the change data feed on: created with it, or (a table created
    before, or by another writer) switched on, which records the changes of later commits.
    A column the landing format gained since a table was created is added to it (the rows
    landed before have it NULL), never a table rewritten."""
    spark.sql(f"create schema if not exists `{schema}`")
    for table in BRONZE_SCHEMAS:
        name = f"`{schema}`.`{table}`"
        spark.sql(
            f"create table if not exists {name} ({bronze_ddl_schema(table)}) "
            f"using delta tblproperties ('{CHANGE_FEED}' = 'true')"
        )
        existing = {field.name for field in spark.table(name).schema.fields}
        missing = [(c, t) for c, t in bronze_columns(table) if c not in existing]
        if missing:
            added = ", ".join(f"`{column}` {dtype}" for column, dtype in missing)
            spark.sql(f"alter table {name} add columns ({added})")
        properties = spark.sql(f"show tblproperties {name}").collect()
        if {row.key: row.value for row in properties}.get(CHANGE_FEED, "false").lower() != "true":
            spark.sql(f"alter table {name} set tblproperties ('{CHANGE_FEED}' = 'true')")


def load_batches(
    spark: SparkSession, generator: ShopGenerator, schema: str, through: int
) -> dict[int, dict[str, int]]:
    """Append batches 0..through to bronze; a batch already loaded is skipped, not duplicated.

    Each append carries Delta's idempotent-write identifiers (txnAppId/txnVersion = batch id),
    so a retried or repeated load of a batch commits nothing; a concurrency conflict is
    retried with backoff (the adapter's retry policy), which is safe for the same reason.
    Returns, per batch, the rows appended to each table: a table whose append Delta skipped
    (the batch was already there) is left out, so an empty dict means "already loaded".
    """
    create_bronze_tables(spark, schema)
    loaded: dict[int, dict[str, int]] = {}
    for batch_id, rows_by_table in generator.batches(through):
        counts = {}
        for table, rows in rows_by_table.items():
            if not rows:
                continue
            frame = spark.createDataFrame(pa.Table.from_pylist(rows, schema=arrow_schema(table)))
            writer = (
                frame.write.format("delta")
                .mode("append")
                .option("txnAppId", f"lakehouse.bronze.{schema}.{table}")
                .option("txnVersion", batch_id)
            )
            name = f"`{schema}`.`{table}`"
            version_before = _table_version(spark, name)
            run_with_retry(
                lambda writer=writer, name=name: writer.saveAsTable(name),
                name,
                f"append of bronze batch {batch_id}",
            )
            if _table_version(spark, name) != version_before:
                counts[table] = len(rows)
        loaded[batch_id] = counts
        log.info("bronze batch %s: %s", batch_id, counts or "already loaded")
    return loaded


def _table_version(spark: SparkSession, name: str) -> int:
    return spark.sql(f"describe history {name} limit 1").first()["version"]
