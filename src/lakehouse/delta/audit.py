"""Commit audit of the project's Delta tables, read from their logs by `lakehouse.delta.log`.

Used by the `delta_commit_audit` Python model and by `lakehouse inspect`. The tables are found
at run time (every Delta table of a schema), so models added later are audited without edits.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from lakehouse.delta.log import DeltaLog, VersionReport

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

AUDIT_SCHEMA = (
    "commit_id string, table_name string, version bigint, committed_at timestamp, "
    "operation string, user_metadata string, files_added bigint, files_removed bigint, "
    "records_added bigint, records_removed bigint, cdc_files bigint, "
    "has_in_commit_timestamp boolean"
)
_IDENTIFIER = re.compile(r"^[A-Za-z0-9_]+$")


def quoted(*parts: str) -> str:
    """`a`.`b`, after checking each part is a plain identifier (they come from arguments)."""
    for part in parts:
        if not _IDENTIFIER.match(part):
            raise ValueError(
                f"{part!r} is not a valid table or schema name: use letters, digits and _ only"
            )
    return ".".join(f"`{part}`" for part in parts)


def table_location(spark: SparkSession, table: str) -> str:
    """Location of a Delta table `schema.table` (or `table`), from DESCRIBE DETAIL."""
    detail = spark.sql(f"describe detail {quoted(*table.split('.'))}").collect()[0]
    if detail.format != "delta":
        raise ValueError(f"{table} is a {detail.format} table, not a Delta table")
    return detail.location


def delta_tables(spark: SparkSession, schema: str) -> dict[str, str]:
    """Every Delta table of a schema (views and other formats left out): name -> location,
    from the metastore's entries in one SHOW TABLE EXTENDED (a DESCRIBE per table would load
    each table's log: seconds for a schema of fresh clones)."""
    tables = {}
    for row in spark.sql(f"show table extended in {quoted(schema)} like '*'").collect():
        if row.isTemporary:
            continue
        entry = dict(line.split(": ", 1) for line in row.information.splitlines() if ": " in line)
        if entry.get("Type") == "VIEW" or entry.get("Provider", "").lower() != "delta":
            continue
        tables[row.tableName] = entry["Location"]
    return tables


def audit_row(table: str, report: VersionReport) -> dict:
    return {
        "commit_id": f"{table}@{report.version}",
        "table_name": table,
        "version": report.version,
        "committed_at": datetime.fromtimestamp(report.timestamp / 1000, UTC),
        "operation": report.operation,
        "user_metadata": report.user_metadata,
        "files_added": report.files_added,
        "files_removed": report.files_removed,
        "records_added": report.records_added,
        "records_removed": report.records_removed,
        "cdc_files": report.cdc_files,
        "has_in_commit_timestamp": report.in_commit_timestamp is not None,
    }


def commit_audit(spark: SparkSession, schema: str, exclude: tuple[str, ...] = ()) -> DataFrame:
    """One row per commit of every Delta table in `schema` (except `exclude`)."""
    rows = [
        audit_row(table, report)
        for table, location in sorted(delta_tables(spark, schema).items())
        if table not in exclude
        for report in DeltaLog(location).iter_history()
    ]
    return spark.createDataFrame(rows, schema=AUDIT_SCHEMA)
