"""The short report `lakehouse run` ends with: Delta at work on the batch it just processed."""

from __future__ import annotations

from typing import TYPE_CHECKING

from lakehouse.delta.audit import delta_tables

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

SILVER_TABLES = ("int_orders_deduplicated", "int_order_lines_deduplicated")
TIME_TRAVEL_TABLE = "fct_orders"


def delta_versions(spark: SparkSession, schema: str) -> dict[str, int]:
    """Latest commit version of every Delta table in the schema (views are skipped)."""
    return {
        table: spark.sql(f"describe history `{schema}`.`{table}` limit 1").first().version
        for table in delta_tables(spark, schema)
    }


def change_counts(spark: SparkSession, table: str, after_version: int) -> dict[str, int]:
    """Change-data rows the table produced after `after_version`, by change type."""
    rows = spark.sql(
        f"select _change_type, count(*) as n from table_changes('{table}', {after_version + 1}) "
        "group by _change_type"
    ).collect()
    return {r._change_type: r.n for r in rows}


def render_summary(
    spark: SparkSession, schema: str, before: dict[str, int], after: dict[str, int]
) -> str:
    lines = ["", "Delta at work", "============="]
    lines.append("Table versions (before -> after this batch):")
    for table in sorted(after):
        lines.append(f"  {table:<36} {before.get(table, '-')!s:>4} -> {after[table]}")

    lines.append("Change data feed of the silver tables for this batch:")
    for table in SILVER_TABLES:
        if table in before and after.get(table, -1) > before[table]:
            counts = change_counts(spark, f"{schema}.{table}", before[table])
            described = ", ".join(f"{kind}={n}" for kind, n in sorted(counts.items()))
            lines.append(f"  {table:<36} {described or 'no changes'}")
        else:
            lines.append(f"  {table:<36} no new version")

    if TIME_TRAVEL_TABLE in before:
        relation = f"`{schema}`.`{TIME_TRAVEL_TABLE}`"
        query = "select count(*) as orders, coalesce(sum(order_amount), 0) as revenue from {}"
        then = spark.sql(query.format(f"{relation} version as of {before[TIME_TRAVEL_TABLE]}"))
        now = spark.sql(query.format(relation)).first()
        then = then.first()
        lines.append(
            f"Time travel on {TIME_TRAVEL_TABLE}: version {before[TIME_TRAVEL_TABLE]} had "
            f"{then.orders} orders / revenue {then.revenue}; now {now.orders} / {now.revenue}"
        )

    quarantined = spark.sql(
        f"select source_table, rejection_reason, count(*) as n "
        f"from `{schema}`.`int_shop_rows_quarantined` group by 1, 2 order by 1, 2"
    ).collect()
    lines.append("Quarantined source rows (left out of silver, kept with the reason):")
    lines.extend(f"  {r.source_table}: {r.rejection_reason} ({r.n})" for r in quarantined)
    if not quarantined:
        lines.append("  none")
    return "\n".join(lines)
