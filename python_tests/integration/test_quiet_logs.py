"""The Spark log holds what needs attention, not the metastore's known-harmless refusals."""

from __future__ import annotations

from lakehouse.settings import session_settings
from python_tests.conftest import unique_schema


def test_a_replace_that_changes_the_schema_logs_no_metastore_error(delta_spark):
    """A Delta table's schema in the Hive metastore is a placeholder; when a replace changes the
    schema, Hive refuses Spark's Hive-compatible update and logged it at ERROR with a stack
    trace, though Spark then stores it its own way (log4j2.properties of the adapter)."""
    log = session_settings().launch_log
    schema = unique_schema("quiet_logs")
    table = f"{schema}.replaced"
    delta_spark.sql(f"create schema {schema}")
    try:
        start = log.stat().st_size
        delta_spark.sql(f"create or replace table {table} using delta as select 1 as id")
        delta_spark.sql(f"create or replace table {table} using delta as select 'a' as name")
        assert [row.name for row in delta_spark.table(table).schema] == ["name"]
        with open(log, "rb") as file:
            file.seek(start)
            written = file.read().decode(errors="replace")
        assert "HiveAlterHandler" not in written and "types incompatible" not in written
    finally:
        delta_spark.sql(f"drop schema {schema} cascade")
