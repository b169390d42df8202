"""The independent readers of Delta tables the tests compare with Spark: delta-rs's DataFusion
reader and DuckDB with its delta extension (delta-kernel-rs)."""

from __future__ import annotations

from pathlib import Path

import duckdb
import duckdb_extension_delta
import pyarrow as pa
from deltalake import DeltaTable, QueryBuilder


def delta_rs_sql_read(table: DeltaTable) -> pa.Table:
    """delta-rs's DataFusion reader (a different read path from `to_pyarrow_table`)."""
    return pa.table(QueryBuilder().register("t", table).execute("select * from t").read_all())


def duckdb_with_delta() -> duckdb.DuckDBPyConnection:
    """An in-memory DuckDB with the delta extension of the PyPI package (no download)."""
    package = Path(duckdb_extension_delta.__file__).parent
    (extension,) = package.glob(f"extensions/v{duckdb.__version__}/delta.duckdb_extension")
    connection = duckdb.connect()
    connection.load_extension(str(extension))
    return connection
