"""How a seed's rows travel to Spark, decided once per connection method, and the one statement
that writes them.

No value is ever written into SQL text by hand: the rows are text (None for an empty cell) and
one SELECT casts each column to its type. Where they come from:

- `session`: a DataFrame of the embedded SparkSession, which is also the connection's,
  registered as a temporary view;
- `connect`: a DataFrame of the connection's own Spark Connect session, as a temporary view;
- `thrift` with `spark_connect_url`: a DataFrame of the Spark Connect session of that endpoint,
  which must be the same Spark application as the Thrift server (a Thrift server with the
  Spark Connect plugin): a global temporary view, which every session of the application sees;
- any other method (`thrift` without Connect): a VALUES list in the statement, every value a
  bound parameter escaped by the driver (one statement: 30,000 rows in about 20 s over PyHive).

Every statement goes through the adapter's connection (conflict retries, error wording, commit
provenance). A Delta seed is replaced in one commit (`replace_table`): readers never see it
missing or empty. Another file format gets its rows by one INSERT (`insert_rows`).
"""

from __future__ import annotations

import datetime
import decimal
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from dbt_common.exceptions import DbtRuntimeError

GLOBAL_TEMP = "global_temp"


@dataclass(frozen=True)
class SeedRoute:
    session: Any  # the SparkSession that receives the rows; None: VALUES in the statement
    shared: bool = False  # the statement runs in another session of the application: a global view
    binding_char: str = "%s"  # the driver's parameter marker (VALUES only)

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


@dataclass(frozen=True)
class Statement:
    """SQL text and, on the VALUES route, its bound parameters."""

    sql: str
    bindings: list[Any] | None = None

    def run(self, adapter: Any) -> None:
        if self.bindings is None:
            adapter.execute(self.sql)
        else:
            adapter.connections.add_query(self.sql, bindings=self.bindings, abridge_sql_log=True)


def replace_table(
    adapter: Any,
    route: SeedRoute,
    relation: str,
    head: str,
    view_columns: list[str],
    agate_table: Any,
    types: list[str],
) -> str:
    """Create or replace the seed's Delta table with its rows in ONE commit:
    `<head> as select * from <view>`, where `head` is the CREATE OR REPLACE TABLE ... USING
    delta clause (layout, location, comment, properties) and the temporary view names the cast
    columns as `view_columns` says (`name comment '...'`: a CTAS cannot declare column comments,
    a view's comments carry into the table). The statement, for the compiled file."""
    view = f"sparkdelta_seed_columns_{uuid.uuid4().hex}"
    with _rows_select(route, relation, agate_table, types) as select:
        columns = _escaped(route, ", ".join(view_columns), select.bindings)
        create_view = Statement(
            f"create or replace temporary view `{view}` ({columns}) as {select.sql}",
            select.bindings,
        )
        sql = f"{head}\nas select * from `{view}`"
        try:
            _run(adapter, route, relation, create_view)
            adapter.execute(sql)
        finally:
            adapter.execute(f"drop view if exists `{view}`")
    return sql


def insert_rows(
    adapter: Any, route: SeedRoute, relation: str, agate_table: Any, types: list[str]
) -> str:
    """Insert the seed's rows into `relation` (a seed of another file format than Delta, just
    created); the statement, for the compiled file."""
    with _rows_select(route, relation, agate_table, types) as select:
        target = _escaped(route, relation, select.bindings)
        insert = Statement(f"insert into {target} {select.sql}", select.bindings)
        _run(adapter, route, relation, insert)
    return insert.sql


def _run(adapter: Any, route: SeedRoute, relation: str, statement: Statement) -> None:
    """Run the statement that reads the rows; a global view the Thrift server cannot see is
    named as what it is."""
    try:
        statement.run(adapter)
    except DbtRuntimeError as exc:
        if route.shared and "TABLE_OR_VIEW_NOT_FOUND" in str(exc):
            raise DbtRuntimeError(
                f"Seed {relation}: the Thrift endpoint does not see the rows sent to the Spark "
                "Connect endpoint of `spark_connect_url`; seeds on `thrift` need both to be one "
                "Spark application (a Thrift server with the Spark Connect plugin). Nothing was "
                f"loaded. ({exc})"
            ) from exc
        raise


def _escaped(route: SeedRoute, text: str, bindings: list[Any] | None) -> str:
    """`text` in a statement with bindings: PyHive formats the statement with `%`."""
    if bindings is None or route.binding_char != "%s":
        return text
    return text.replace("%", "%%")


@contextmanager
def _rows_select(
    route: SeedRoute, relation: str, agate_table: Any, types: list[str]
) -> Iterator[Statement]:
    """A SELECT of the seed's rows cast to `types` (columns c0, c1, ...), while it is valid."""
    columns = [f"c{index}" for index in range(len(agate_table.column_names))]
    casts = ", ".join(
        f"cast(`{name}` as {data_type})" for name, data_type in zip(columns, types, strict=True)
    )
    rows = [tuple(seed_value_text(value) for value in row) for row in agate_table.rows]
    if route.session is None:
        yield _values_select(route, columns, casts, rows)
        return
    from pyspark.sql.types import StringType, StructField, StructType

    schema = StructType([StructField(name, StringType(), True) for name in columns])
    name = f"sparkdelta_seed_{uuid.uuid4().hex}"
    view = route.create_view(route.session.createDataFrame(rows, schema), name)
    try:
        yield Statement(f"select {casts} from {view}")
    finally:
        route.drop_view(name)


def _values_select(
    route: SeedRoute, columns: list[str], casts: str, rows: list[tuple[str | None, ...]]
) -> Statement:
    """The rows as one VALUES list of bound parameters (the text goes in escaped by the
    driver): one statement, so a Delta seed still gets one commit."""
    marker = route.binding_char
    if not rows:  # VALUES needs a row: one of NULLs, filtered out
        nulls = ", ".join(f"cast(null as string) as `{name}`" for name in columns)
        return Statement(f"select {casts} from (select {nulls}) as seed_rows where false")
    row = "(" + ", ".join([marker] * len(columns)) + ")"
    names = ", ".join(f"`{name}`" for name in columns)
    return Statement(
        f"select {casts} from values {', '.join([row] * len(rows))} as seed_rows({names})",
        [value for values in rows for value in values],
    )


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
