"""erase_subject's dry run on the session's shop (built batch by batch, every layer): one
command finds the customer in every Delta table of the project that holds it, its orders
followed into the lines, payments and the tables keyed by order alone (the lineage table and
the order payments the issue's hand-made procedure missed), and changes nothing. The
expectation is read independently: the customer's orders from bronze's data files (pyarrow),
each table's rows by a plain count. The real erasure, its vacuum and its proof from the files
are test_late_changes' (make test-sequences) and delta_ops' operation tests'."""

from __future__ import annotations

import re
from pathlib import Path

import pyarrow.compute as pc
import pyarrow.parquet as pq

from python_tests.integration.conftest import table_versions


def orders_in_files(spark, bronze: str, customer: int) -> set[int]:
    """The customer's order ids in every data file of bronze's orders, read with pyarrow."""
    location = spark.sql(f"describe detail `{bronze}`.`orders`").first().location
    found = set()
    for file in Path(location.removeprefix("file:")).glob("*.parquet"):
        rows = pq.read_table(file, columns=["order_id", "customer_id"])
        found |= set(rows.filter(pc.equal(rows["customer_id"], customer))["order_id"].to_pylist())
    return found


def test_a_dry_run_finds_the_customer_in_every_table_that_holds_it_and_changes_nothing(shop):
    project = shop.project
    spark = project.spark
    bronze = project.bronze_schema
    # the customer with the most paid orders
    [picked] = spark.sql(
        f"select o.customer_id from `{bronze}`.`orders` o join `{bronze}`.`payments` p "
        "using (order_id) group by 1 order by count(distinct order_id) desc, 1 limit 1"
    ).collect()
    customer = picked.customer_id
    orders = orders_in_files(spark, bronze, customer)
    order_ids = ", ".join(map(str, sorted(orders)))
    conditions = {
        "customer_id": f"customer_id = {customer}",
        "order_id": f"order_id in ({order_ids})",
    }
    before = {schema: table_versions(spark, schema) for schema in (bronze, project.schema)}
    expected = {}
    for schema, tables in before.items():
        for table in tables:
            name = f"`{schema}`.`{table}`"
            columns = {column.name for column in spark.table(name).schema}
            where = " or ".join(term for column, term in conditions.items() if column in columns)
            if where:
                count = spark.sql(f"select count(*) as n from {name} where {where}").first().n
                expected[f"{schema}.{table}"] = count

    dry = project.run_operation("erase_subject", {"subject": "customer", "value": customer})

    assert dry.success, dry.said
    assert f"the subject is customer_id {customer}; order_id {order_ids}" in dry.log, dry.said
    for name, rows in expected.items():
        would_delete = rf"{re.escape(name)} +dry run +[0-9.]+ +would delete {rows} rows"
        assert re.search(would_delete, dry.log), (name, dry.said)
    holding = {name.split(".")[1] for name, rows in expected.items() if rows}
    assert {"int_order_row_lineage", "fct_order_payments", "payments", "order_lines"} <= holding
    assert {schema: table_versions(spark, schema) for schema in before} == before
