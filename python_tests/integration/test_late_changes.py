"""Bronze commits no batch-id watermark could follow, made by an independent Delta writer
(plain DataFrame appends and Delta DML, no project code, no idempotency ids): a backfill with a
lower batch id, NULL batch ids, two loaders with interleaved and equal batch ids, a commit that
lands while `dbt build` runs, orders without a date or status, the largest quantity times the
largest price, a correction in place, the erasure of a customer, an append folded into silver
without bronze's earlier files, an order line moved to another order, a MERGE that updates and
inserts in one commit, a RESTORE, an overwrite, a compaction and a change-feed gap. After
each incremental build the silver and gold tables equal the independent recompute of
python_tests/shop_reference.py; after the compaction, the last rewrite merged incrementally, a
`--full-refresh` build of the same bronze by a second project equals them too (built once: the
recompute is checked after every step). The specific outcomes are checked on the rows and on
the Delta history.
"""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from lakehouse.shop.bronze import arrow_schema, create_bronze_tables
from python_tests.integration.test_equivalence import Sequence, build_of

pytestmark = pytest.mark.sequence  # make test-sequences

MAX_QUANTITY = 2_147_483_647  # the bronze column is an int
MAX_PRICE = Decimal("99999999.99")  # the bronze column is a decimal(10,2)
# The tables of the entities these commits change (products and payments stay empty here; the
# random sequence of test_equivalence rewrites them too).
COMPARED = (
    "int_customers_deduplicated", "int_orders_deduplicated", "int_order_lines_deduplicated",
    "fct_orders", "fct_order_lines", "fct_daily_revenue", "fct_customer_revenue",
    "int_shop_rows_quarantined",
)  # fmt: skip
BUILD, REBUILD = build_of(COMPARED), build_of(COMPARED, seeds=False)


def at(day: int, hour: int = 10) -> datetime:
    return datetime(2026, 6, day, hour, tzinfo=UTC)


FIRST_DAY = at(1, 8)


def order(order_id, batch, updated, status="placed", customer=1, ordered=FIRST_DAY, op="U"):
    return {
        "order_id": order_id, "customer_id": customer, "status": status, "ordered_at": ordered,
        "updated_at": updated, "_op": op, "_batch_id": batch, "_loaded_at": at(28),
    }  # fmt: skip


def line(line_id, order_id, batch, updated, quantity=1, price="10.00", op="U"):
    return {
        "order_line_id": line_id, "order_id": order_id, "product_id": 1, "quantity": quantity,
        "unit_price": Decimal(price), "updated_at": updated, "_op": op, "_batch_id": batch,
        "_loaded_at": at(28),
    }  # fmt: skip


class LateChanges(Sequence):
    compared = COMPARED

    def __init__(self, spark, tmp_path_factory):
        super().__init__(spark, tmp_path_factory, seed=26, batches=1)
        create_bronze_tables(spark, self.incremental.bronze_schema)

    def append(self, table: str, rows: list[dict]) -> int:
        """One plain Delta append (one commit); returns the bronze version it made."""
        import pyarrow as pa

        name = f"`{self.incremental.bronze_schema}`.`{table}`"
        frame = self.spark.createDataFrame(pa.Table.from_pylist(rows, schema=arrow_schema(table)))
        frame.write.format("delta").mode("append").saveAsTable(name)
        return self.bronze_version(table)

    def build(self, after: str, seeds: bool = False) -> None:
        """A build (the seeds only in the first: they never change here), then the check."""
        self.incremental.dbt(*(BUILD if seeds else REBUILD))
        self.check(after_batch=after, full_refresh=False)

    def sql(self, statement: str) -> int:
        """One Delta statement on bronze (`{bronze}` is its schema); returns the version made."""
        statement = statement.format(bronze=f"`{self.incremental.bronze_schema}`")
        self.spark.sql(statement)
        table = statement.split("`")[3]  # the first table the statement names
        return self.bronze_version(table)

    def bronze_version(self, table: str) -> int:
        name = f"`{self.incremental.bronze_schema}`.`{table}`"
        return self.spark.sql(f"describe history {name} limit 1").first().version

    def erase(self, where: str, dry_run: bool = False, **selection):
        """The erase operation of delta_ops, run against the incremental project."""
        args = {"where": where, "dry_run": dry_run, **selection}
        if args.pop("vacuum", False):
            args |= {"vacuum": True, "unsafe_allow_short_retention": True}
        return self.incremental.run_operation("erase", args)

    def watermark(self, model: str) -> dict[str, int]:
        history = self.incremental.history(model)
        return json.loads(history[0].userMetadata)["sparkdelta_cdf_watermark"]

    def order_row(self, order_id: int):
        [row] = self.incremental.rows(
            f"select * from {self.incremental.relation('int_orders_deduplicated')} "
            f"where order_id = {order_id}"
        )
        return row

    def revenue(self, table: str, where: str) -> list:
        return self.incremental.rows(f"select * from {self.incremental.relation(table)} {where}")


@pytest.fixture(scope="module")
def late(delta_spark, tmp_path_factory) -> LateChanges:
    sequence = LateChanges(delta_spark, tmp_path_factory)
    sequence.append("customers", [
        {"customer_id": c, "full_name": "Ann", "email": "a@x.nl", "country_code": "NL",
         "created_at": at(1, 0), "updated_at": at(1, 0), "_op": "I", "_batch_id": 0,
         "_loaded_at": at(1, 0)}
        for c in (1, 2)
    ])  # fmt: skip
    sequence.append("orders", [
        order(1091, 12, at(2), status="delivered", op="I"),
        order(1093, 12, at(2), op="I"),
        order(1094, 12, at(2), op="I"),
    ])  # fmt: skip
    sequence.append("order_lines", [
        line(1, 1091, 12, at(2), op="I", price="864.78"),
        line(2, 1093, 12, at(2), op="I"),
        line(3, 1094, 12, at(2), op="I"),
    ])  # fmt: skip
    sequence.build(after="initial", seeds=True)
    # the customers' history, which keeps an erased customer on purpose (test_erase_...)
    sequence.incremental.dbt(
        "build",
        "-s",
        "+dim_customers",
        "--exclude",
        "resource_type:test",
        "resource_type:unit_test",
    )
    return sequence


def test_backfill_with_a_lower_batch_id_wins_when_newer(late):
    # batch 12 is merged; a valid, newer update arrives under batch id 2 (a backfill)
    late.append("orders", [order(1091, 2, at(3), status="cancelled")])
    late.build(after="backfill")
    assert (late.order_row(1091).status, late.order_row(1091).batch_id) == ("cancelled", 2)
    fct = late.revenue("fct_orders", "where order_id = 1091")
    assert [r.status for r in fct] == ["cancelled"]
    # the cancelled order's revenue (864.78) left its date: the lines of 1093 and 1094 remain
    [day] = late.revenue("fct_daily_revenue", "where order_date = '2026-06-01'")
    assert (day.order_count, day.revenue) == (2, Decimal("20.00"))


def test_null_batch_id_change_is_merged_and_ranks_lowest_on_a_tie(late):
    late.append("orders", [order(1093, None, at(4), status="paid")])
    # same updated_at as a change with a batch id: the batch id wins, NULL is the lowest
    late.append("orders", [order(1094, None, at(5), status="shipped")])
    late.append("orders", [order(1094, 1, at(5), status="paid")])
    late.build(after="null batch ids")
    assert (late.order_row(1093).status, late.order_row(1093).batch_id) == ("paid", None)
    assert (late.order_row(1094).status, late.order_row(1094).batch_id) == ("paid", 1)


def test_two_loaders_with_interleaved_and_equal_batch_ids(late):
    # loader A numbers 7, loader B 3: B's change is newer and wins despite the lower id
    late.append("orders", [order(1093, 7, at(6), status="shipped")])
    late.append("orders", [order(1093, 3, at(7), status="delivered")])
    late.build(after="loaders interleaved")
    assert late.order_row(1093).status == "delivered"
    # both number 5 with the same updated_at, in commits merged by different runs: the rule's
    # last tie-breaks decide (D > U > I, then the larger values), whichever run saw them
    late.append("orders", [order(1094, 5, at(8), status="delivered")])
    late.build(after="loader A, batch 5")
    late.append("orders", [order(1094, 5, at(8), status="cancelled")])
    late.build(after="loader B, batch 5")
    assert late.order_row(1094).status == "delivered"  # 'delivered' > 'cancelled'


def test_batch_appended_during_build_is_read_by_the_next_run_once(late):
    bronze = f"{late.incremental.bronze_schema}.orders"
    appended: list[int] = []

    def append_while_building(event) -> None:
        # after the model compiled (its bronze version is pinned), before its MERGE commits
        if event.info.name != "NodeExecuting":
            return
        if event.data.node_info.unique_id.endswith(".int_orders_deduplicated"):
            appended.append(late.append("orders", [order(1095, 1, at(9), op="I")]))

    # a change the run reads, so that it commits; the bronze version it pins is this one
    pinned = late.append("orders", [order(1093, 8, at(9), status="cancelled")])
    late.incremental.runner.invoke(*REBUILD, callbacks=[append_while_building])
    assert appended == [pinned + 1]
    history = late.incremental.history("int_orders_deduplicated")
    watermark = json.loads(history[0].userMetadata)["sparkdelta_cdf_watermark"]
    assert watermark == {bronze: pinned}
    assert late.incremental.count("int_orders_deduplicated", "order_id = 1095") == 0
    assert late.order_row(1093).status == "cancelled"

    late.append("order_lines", [line(4, 1095, 1, at(9), op="I")])
    late.build(after="a batch appended during a build")
    history = late.incremental.history("int_orders_deduplicated")
    assert json.loads(history[0].userMetadata)["sparkdelta_cdf_watermark"] == {bronze: pinned + 1}
    # merged once: one change-feed row of order 1095 in silver since the run that missed it
    merged = late.incremental.rows(
        f"select _change_type from table_changes('{late.incremental.schema}."
        f"int_orders_deduplicated', {history[1].version + 1}) where order_id = 1095"
    )
    assert [r._change_type for r in merged] == ["insert"]


def test_orders_without_date_or_status_are_quarantined_in_every_build(late):
    late.append("orders", [order(1096, 20, at(10), ordered=None, op="I")])
    late.append("order_lines", [line(5, 1096, 20, at(10), op="I", price="864.78")])
    late.build(after="a NULL ordered_at")
    late.append("orders", [order(1097, 21, at(10), ordered=None, op="I")])
    late.append("orders", [order(1098, 21, at(10), status=None, op="I")])
    late.append("order_lines", [line(6, 1097, 21, at(10), op="I", price="1012.15")])
    late.build(after="a second NULL ordered_at, a NULL status")
    reasons = late.incremental.rows(
        f"select record_id, rejection_reason from "
        f"{late.incremental.relation('int_shop_rows_quarantined')} where record_id >= 1096"
    )
    assert sorted(tuple(r) for r in reasons) == [
        (1096, "ordered_at is null"), (1097, "ordered_at is null"), (1098, "status is null"),
    ]  # fmt: skip
    assert late.revenue("fct_daily_revenue", "where order_date is null") == []
    late.incremental.dbt("test", "-s", "fct_daily_revenue", "int_orders_deduplicated")


def test_largest_quantity_times_largest_price_sums_exactly(late):
    amount = MAX_QUANTITY * MAX_PRICE
    late.append("orders", [order(1099, 30, at(11), customer=2, ordered=at(20, 8), op="I")])
    late.append("order_lines", [
        line(7, 1099, 30, at(11), quantity=MAX_QUANTITY, price=str(MAX_PRICE), op="I"),
        line(8, 1099, 30, at(11), quantity=MAX_QUANTITY, price=str(MAX_PRICE), op="I"),
    ])  # fmt: skip
    late.build(after="the largest amounts")
    [fct_order] = late.revenue("fct_orders", "where order_id = 1099")
    assert fct_order.order_amount == 2 * amount
    assert fct_order.item_count == 2 * MAX_QUANTITY
    lines = late.revenue("fct_order_lines", "where order_id = 1099")
    assert [r.line_amount for r in lines] == [amount, amount]
    [day] = late.revenue("fct_daily_revenue", "where order_date = '2026-06-20'")
    assert day.revenue == 2 * amount
    [customer] = late.revenue("fct_customer_revenue", "where customer_id = 2")
    assert customer.revenue == 2 * amount
    # a second build adds to the same date and customer: still exact, never NULL or stale
    late.append("orders", [order(1100, 31, at(12), customer=2, ordered=at(20, 9), op="I")])
    late.append("order_lines", [
        line(9, 1100, 31, at(12), quantity=MAX_QUANTITY, price=str(MAX_PRICE), op="I"),
    ])  # fmt: skip
    late.build(after="the largest amounts, again")
    [day] = late.revenue("fct_daily_revenue", "where order_date = '2026-06-20'")
    assert (day.order_count, day.revenue) == (2, 3 * amount)
    [customer] = late.revenue("fct_customer_revenue", "where customer_id = 2")
    assert customer.revenue == 3 * amount


def test_a_correction_in_place_reaches_silver_and_gold(late):
    # the rows that won are rewritten in place: same updated_at and batch, values that rank
    # lower than the old ones, so only recomputing the touched keys can see them
    late.sql("update {bronze}.`orders` set status = 'cancelled' where order_id = 1099")
    late.sql("update {bronze}.`order_lines` set quantity = 1 where order_line_id = 9")
    late.build(after="a correction in place")
    assert late.order_row(1099).status == "cancelled"
    [day] = late.revenue("fct_daily_revenue", "where order_date = '2026-06-20'")
    assert (day.order_count, day.revenue) == (1, MAX_PRICE)  # 1100's one line, quantity 1
    [customer] = late.revenue("fct_customer_revenue", "where customer_id = 2")
    assert customer.revenue == MAX_PRICE


def test_an_erased_customer_leaves_silver_and_gold(late):
    # a right-to-erasure request applied to bronze: the customer and its orders through the
    # erase operation, their lines by a plain DELETE of another writer
    # bronze holds customer 2 once and its two orders (1099, 1100) once each
    for table, rows in (("customers", 1), ("orders", 2)):
        erased = late.erase(
            "customer_id = 2", schema=late.incremental.bronze_schema, pattern=table,
            vacuum=True, retain_hours=0,
        )  # fmt: skip
        assert f"deleted {rows} rows at version" in erased.log, erased.said
    # the silver orders have not read the erasure's change data yet: its vacuum waits for the
    # build (which then reads it, below), instead of removing what that build has to read
    assert "vacuum waits: int_orders_deduplicated (read to " in erased.log, erased.said
    late.sql("delete from {bronze}.`order_lines` where order_id in (1099, 1100)")
    late.build(after="the erasure of customer 2")
    for model, where in [
        ("int_customers_deduplicated", "customer_id = 2"),
        ("int_orders_deduplicated", "order_id in (1099, 1100)"),  # no tombstone either
        ("int_order_lines_deduplicated", "order_id in (1099, 1100)"),
        ("fct_orders", "customer_id = 2"),
        ("fct_order_lines", "order_id in (1099, 1100)"),
        ("fct_daily_revenue", "order_date = '2026-06-20'"),
        ("fct_customer_revenue", "customer_id = 2"),
    ]:
        assert late.incremental.count(model, where) == 0, model
    # silver took the removal as a delete: its change feed tells gold (and any reader)
    version = late.incremental.history("int_orders_deduplicated")[0].version
    removed = late.incremental.rows(
        f"select order_id from table_changes('{late.incremental.schema}."
        f"int_orders_deduplicated', {version}) where _change_type = 'delete'"
    )
    assert sorted(r.order_id for r in removed) == [1099, 1100]


# The erased customer 2 and its orders (erasure_subjects.customer in dbt_project.yml)
SUBJECT = {"customer_id": {2}, "order_id": {1099, 1100}}


def subject_rows_in_files(spark, schema: str) -> dict[str, int]:
    """Rows of the subject in every parquet file (data and change data) under each Delta
    table of the schema, read with pyarrow, not through the Delta log or the project."""
    found = {}
    for table in spark.catalog.listTables(schema):
        if table.isTemporary or table.tableType == "VIEW":
            continue
        location = spark.sql(f"describe detail `{schema}`.`{table.name}`").first().location
        for file in Path(location.removeprefix("file:")).rglob("*.parquet"):
            if "_delta_log" in file.parts:
                continue
            columns = pq.read_table(file)
            for key, values in SUBJECT.items():
                if key in columns.column_names:
                    held = sum(value in values for value in columns.column(key).to_pylist())
                    found[table.name] = found.get(table.name, 0) + held
    return found


def test_erase_leaves_no_file_that_holds_the_subject(late):
    # the snapshot closed the erased customer's history but keeps it, as a snapshot should
    kept = late.incremental.count("snap_customers", "customer_id = 2")
    assert kept > 0
    # dim_customers has not been built since bronze lost the customer (like a model dbt skips
    # after a failing test upstream): it holds the customer, and only the erasure reaches it
    assert late.incremental.count("dim_customers", "customer_id = 2") > 0
    before = late.incremental.history("fct_orders")[0].version
    # a table the condition does not apply to is refused, and nothing is deleted anywhere
    refused = late.erase("customer_id = 2", models=["fct_orders", "fct_daily_revenue"])
    assert not refused.success
    assert "does not apply to 1 of 2 tables, so nothing was deleted" in refused.error
    assert "fct_daily_revenue" in refused.error
    assert late.incremental.history("fct_orders")[0].version == before
    # a table that identifies customers without a declared key is refused before any delete
    bronze = late.incremental.bronze_schema
    late.sql("create table {bronze}.`crm_contacts` using delta as select 'a@x.nl' as email")
    unkeyed = late.incremental.run_operation(
        "erase_subject", {"subject": "customer", "value": 2, "schema": bronze}
    )
    late.spark.sql(f"drop table `{bronze}`.`crm_contacts`")
    assert not unkeyed.success
    assert "crm_contacts (email) identify the subject without customer_id or order_id" in (
        unkeyed.error
    ), unkeyed.said
    # the dry run follows customer 2 to its orders in every table of the project, bronze's
    # deleted rows included, counts the rows still visible and touches nothing
    snapshot_version = late.incremental.history("snap_customers")[0].version
    erasing = {"subject": "customer", "value": 2}
    dry = late.incremental.run_operation("erase_subject", erasing)
    assert dry.success, dry.said
    assert "the subject is customer_id 2; order_id 1099, 1100" in dry.log, dry.said
    would_delete = rf"snap_customers +dry run +[0-9.]+ +would delete {kept} rows"
    assert re.search(would_delete, dry.log), dry.said
    assert late.incremental.history("snap_customers")[0].version == snapshot_version
    # the proof alone fails while the subject is anywhere, naming the table and the rows
    unproven = late.incremental.run_operation("erase_subject", erasing | {"verify": True})
    assert not unproven.success
    still_here = rf"snap_customers: the subject is still here: rows visible {kept}, "
    assert re.search(still_here, unproven.error), unproven.said
    # bronze's orders and lines were deleted upstream: the files still hold them, and say so
    assert subject_rows_in_files(late.spark, bronze)["orders"] > 0
    assert re.search(
        r"bronze_\w+\.orders +ok +[0-9.]+ +rows visible 0, in current files \d+, "
        r"in files kept for time travel [1-9]",
        dry.log,
    ), dry.said

    erased = late.incremental.run_operation("erase_subject", erasing | {
        "dry_run": False, "vacuum": True, "retain_hours": 0,
        "unsafe_allow_short_retention": True,
    })  # fmt: skip
    assert erased.success, erased.said
    assert f"deleted {kept} rows at version" in erased.log, erased.said
    assert "erase_subject customer verify: 1 of" in erased.log, erased.said
    # no data file or change data file of any table of the project holds the subject now
    for schema, tables in (
        (bronze, {"customers", "orders", "order_lines"}),
        (late.incremental.schema, {"snap_customers", "dim_customers", "fct_orders"}),
    ):
        found = subject_rows_in_files(late.spark, schema)
        assert tables <= set(found) and not any(found.values()), f"{schema}: {found}"
    # the model no build reached is erased too; the snapshot and it, built again from their
    # erased sources, do not bring the customer back
    late.incremental.dbt(
        "build", "-s", "snap_customers", "dim_customers",
        "--exclude", "resource_type:test", "resource_type:unit_test",
    )  # fmt: skip
    for model in ("snap_customers", "dim_customers"):
        assert late.incremental.count(model, "customer_id = 2") == 0, model
    # and the operation's own verification, alone, says the same
    verified = late.incremental.run_operation("erase_subject", erasing | {"verify": True})
    assert verified.success, verified.said
    # time travel to the version before the erasure's DELETE finds its files gone
    orders = f"`{bronze}`.`orders`"
    history = late.incremental.rows(f"describe history {orders}")
    [erased_at] = [c.version for c in history if c.operation == "DELETE"]
    with pytest.raises(Exception, match="(?i)FileNotFound|not exist|FAILED_READ_FILE"):
        late.incremental.rows(f"select * from {orders} version as of {erased_at - 1}")


def data_files(spark, table: str) -> set[Path]:
    """The files of a Delta table outside its log (data, change data, deletion vectors)."""
    location = spark.sql(f"describe detail {table}").first().location
    root = Path(location.removeprefix("file:"))
    return {f for f in root.rglob("*") if f.is_file() and "_delta_log" not in f.parts}


def test_an_append_is_folded_into_silver_without_reading_bronze_history(late):
    lines = f"`{late.incremental.bronze_schema}`.`order_lines`"
    earlier = data_files(late.spark, lines)
    late.append("order_lines", [
        line(10, 1093, 40, at(14), op="I"),
        line(2, 1093, 40, at(14), quantity=3),  # newer than line 2's state: wins
        line(3, 1094, 40, at(1), quantity=7),  # older than line 3's state: loses
    ])  # fmt: skip
    # every bronze file of the commits before the append is out of reach: the run can only
    # read the append (its rows folded into silver's), or fail
    hidden = {file: file.with_name(file.name + ".hidden") for file in earlier}
    for file, away in hidden.items():
        file.rename(away)
    try:
        late.incremental.dbt("run", "-s", "int_order_lines_deduplicated")
    finally:
        for file, away in hidden.items():
            away.rename(file)
    silver = late.incremental.relation("int_order_lines_deduplicated")
    quantities = late.incremental.rows(
        f"select order_line_id, quantity from {silver} where order_line_id in (2, 3, 10)"
    )
    assert sorted(tuple(r) for r in quantities) == [(2, 3), (3, 1), (10, 1)]
    # the MERGE wrote the winners only: line 10 inserted, line 2 updated, line 3 left alone
    metrics = late.incremental.history("int_order_lines_deduplicated")[0].operationMetrics
    assert (metrics["numTargetRowsInserted"], metrics["numTargetRowsUpdated"]) == ("1", "1")
    late.build(after="an append folded into silver")


def test_an_order_line_moved_to_another_order_reaches_both_orders(late):
    # the foreign key changed in place: line 2 (quantity 3) leaves order 1093 for 1094
    late.sql("update {bronze}.`order_lines` set order_id = 1094 where order_line_id = 2")
    late.build(after="an order line moved to another order")
    [moved] = late.revenue("fct_order_lines", "where order_line_id = 2")
    assert moved.order_id == 1094
    items = late.revenue("fct_orders", "where order_id in (1093, 1094) order by order_id")
    assert [(r.order_id, r.item_count) for r in items] == [(1093, 1), (1094, 4)]


def test_a_merge_into_bronze_by_another_writer_updates_and_inserts_in_one_commit(late):
    before = late.bronze_version("orders")
    merged = late.sql(
        "merge into {bronze}.`orders` as t using (select * from values "
        "(1094, 'returned', timestamp'2026-06-08 10:00:00'), "
        "(1102, 'placed', timestamp'2026-06-14 10:00:00') as s(order_id, status, updated_at)) "
        "on t.order_id = s.order_id and t.updated_at = s.updated_at and t._batch_id = 5 "
        "and t.status = 'delivered' "
        "when matched then update set status = s.status "
        "when not matched then insert (order_id, customer_id, status, ordered_at, updated_at, "
        "_op, _batch_id, _loaded_at) values (s.order_id, 1, s.status, "
        "timestamp'2026-06-01 08:00:00', s.updated_at, 'I', 41, timestamp'2026-06-28 10:00:00')"
    )
    assert merged == before + 1  # one commit
    late.build(after="a MERGE into bronze by another writer")
    assert (late.order_row(1094).status, late.order_row(1102).status) == ("returned", "placed")


def test_bronze_restored_to_an_earlier_version_is_read_as_its_changes(late):
    merged = late.bronze_version("orders")
    late.sql(f"restore table {{bronze}}.`orders` to version as of {merged - 1}")
    late.build(after="bronze orders restored to before the MERGE")
    assert late.order_row(1094).status == "delivered"
    assert late.incremental.count("int_orders_deduplicated", "order_id = 1102") == 0


def test_an_overwrite_of_bronze_is_read_as_its_changes(late):
    # a writer replaces the table's contents: the same rows but one status corrected
    late.sql(
        "insert overwrite {bronze}.`orders` select order_id, customer_id, "
        "if(order_id = 1093, 'shipped', status), ordered_at, updated_at, _op, _batch_id, "
        "_loaded_at from {bronze}.`orders`"
    )
    late.build(after="an overwrite of bronze orders")
    assert late.order_row(1093).status == "shipped"


def test_a_compaction_of_bronze_advances_the_watermark_without_a_change(late):
    before = late.incremental.history("int_orders_deduplicated")[0].version
    optimized = late.sql("optimize {bronze}.`orders`")
    late.build(after="a compaction of bronze orders")
    bronze = f"{late.incremental.bronze_schema}.orders"
    # an empty commit records the version read, so the next run does not read it again
    assert late.watermark("int_orders_deduplicated") == {bronze: optimized}
    [commit] = [
        c for c in late.incremental.history("int_orders_deduplicated") if c.version > before
    ]
    assert commit.operationMetrics["numTargetRowsUpdated"] == "0"
    runs = late.incremental.dbt(*REBUILD)
    [silver] = [
        r for r in late.incremental.model_results(runs) if r.node.name == "int_orders_deduplicated"
    ]
    assert silver.message == "OK (no upstream change)"


def test_a_full_refresh_of_the_same_bronze_equals_the_incremental_tables_after_every_rewrite(
    late,
):
    # the incremental project has merged every step so far (late, NULL and tied batch ids, a
    # correction in place, an erasure, an overwrite, a compaction) and never been rebuilt
    late.full_refresh.dbt(*BUILD, "--full-refresh")
    late.check(after_batch="every step, incrementally", full_refresh=True)


def test_a_change_feed_gap_names_the_versions_and_the_full_refresh(late):
    off = late.sql(
        "alter table {bronze}.`orders` set tblproperties ('delta.enableChangeDataFeed' = 'false')"
    )
    late.append("orders", [order(1101, 40, at(13), op="I")])
    late.sql(
        "alter table {bronze}.`orders` set tblproperties ('delta.enableChangeDataFeed' = 'true')"
    )
    result = late.incremental.dbt(*REBUILD, expect_success=False)
    [silver] = [
        r
        for r in late.incremental.model_results(result)
        if r.node.name == "int_orders_deduplicated"
    ]
    assert silver.status == "error"
    assert f"has no change data for versions {off} to {off + 1}" in silver.message
    assert "dbt run --full-refresh -s int_orders_deduplicated" in silver.message
    late.incremental.dbt(*REBUILD, "--full-refresh")  # what the message says, for the whole DAG
    late.check(after_batch="a change-feed gap, then a full refresh", full_refresh=False)
    assert late.order_row(1101).status == "placed"


def test_change_feed_is_switched_on_for_existing_bronze_tables(delta_spark):
    from python_tests.conftest import unique_schema

    schema = unique_schema("old_bronze")
    delta_spark.sql(f"create schema `{schema}`")
    delta_spark.sql(f"create table `{schema}`.`orders` (order_id bigint) using delta")
    create_bronze_tables(delta_spark, schema)
    for table in ("orders", "order_lines"):
        properties = delta_spark.sql(f"show tblproperties `{schema}`.`{table}`").collect()
        assert {r.key: r.value for r in properties}["delta.enableChangeDataFeed"] == "true"
