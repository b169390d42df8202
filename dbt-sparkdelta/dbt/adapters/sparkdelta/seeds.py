"""How a seed's rows travel to Spark, decided once per connection method.

No value is ever written into SQL text: the rows become a DataFrame of text columns (None for an
empty cell) in a SparkSession, registered as a view, and one INSERT ... SELECT, sent through
the adapter's connection like every other statement (conflict retries, error wording, commit
provenance), casts each column to its type: one Delta commit. The DataFrame's session is

- `session`: the embedded SparkSession, which is also the connection's;
- `connect`: the connection's own Spark Connect session;
- `thrift` with `spark_connect_url`: the Spark Connect session of that endpoint, which must be
  the same Spark application as the Thrift server (a Thrift server with the Spark Connect
  plugin): the view is a global temporary view, which every session of the application sees.

Any other method keeps dbt-spark's bound parameters, which its driver escapes (slowly: minutes
for 30,000 rows over PyHive).
"""

from __future__ import annotations

import datetime
import decimal
import uuid
from dataclasses import dataclass
from typing import Any

from dbt_common.exceptions import DbtRuntimeError

GLOBAL_TEMP = "global_temp"


@dataclass(frozen=True)
class SeedRoute:
    session: Any  # the SparkSession that receives the rows
    shared: bool  # the statement runs in another session of the application: a global view

    def create_view(self, frame: Any, name: str) -> str:
        if self.shared:
            frame.createOrReplaceGlobalTempView(name)
            return f"{GLOBAL_TEMP}.`{name}`"
        frame.createOrReplaceTempView(name)
        return f"`{name}`"

    def drop_view(self, name: str) -> None:
        if self.shared:
            self.session.catalog.dropGlobalTempView(name)
        else:
            self.session.catalog.dropTempView(name)


def load_rows(
    adapter: Any, route: SeedRoute, relation: str, agate_table: Any, types: list[str]
) -> str:
    """Insert the seed's rows into `relation` through `route`; the statement, for the compiled
    file."""
    from pyspark.sql.types import StringType, StructField, StructType

    if route.session is None:
        raise DbtRuntimeError(f"Seed {relation}: no SparkSession in this process to load it.")
    columns = [f"c{index}" for index in range(len(agate_table.column_names))]
    schema = StructType([StructField(name, StringType(), True) for name in columns])
    rows = [tuple(seed_value_text(value) for value in row) for row in agate_table.rows]
    casts = ", ".join(
        f"cast(`{name}` as {data_type})" for name, data_type in zip(columns, types, strict=True)
    )
    name = f"sparkdelta_seed_{uuid.uuid4().hex}"
    view = route.create_view(route.session.createDataFrame(rows, schema), name)
    sql = f"insert into {relation} select {casts} from {view}"
    try:
        adapter.execute(sql)
    except DbtRuntimeError as exc:
        if route.shared and "TABLE_OR_VIEW_NOT_FOUND" in str(exc):
            raise DbtRuntimeError(
                f"Seed {relation}: the Thrift endpoint does not see the rows sent to the Spark "
                "Connect endpoint of `spark_connect_url`; seeds on `thrift` need both to be one "
                "Spark application (a Thrift server with the Spark Connect plugin). Nothing was "
                f"loaded. ({exc})"
            ) from exc
        raise
    finally:
        route.drop_view(name)
    return sql


def seed_value_text(value: Any) -> str | None:
    """A seed cell (as agate parsed it) as the text Spark casts to the column's type: None stays
    None (NULL), numbers in plain notation, dates and timestamps in ISO form."""
    if value is None:
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, decimal.Decimal):
        return format(value, "f")
    if isinstance(value, datetime.datetime):
        return value.isoformat(sep=" ")
    if isinstance(value, datetime.date):
        return value.isoformat()
    if isinstance(value, datetime.timedelta):
        return str(value.total_seconds())
    return str(value)
