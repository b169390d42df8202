"""The shop generator: deterministic, consistent change logs with a few bad rows."""

from __future__ import annotations

import json
from decimal import Decimal

from lakehouse.shop.generator import BRONZE_KEYS, BRONZE_SCHEMAS, PAID_STATUSES, ShopGenerator


def test_same_seed_same_rows():
    assert ShopGenerator(orders=100, seed=1).batch(2) == ShopGenerator(orders=100, seed=1).batch(2)
    assert ShopGenerator(orders=100, seed=1).batch(0) != ShopGenerator(orders=100, seed=2).batch(0)


def test_initial_load_has_every_table_and_only_inserts():
    rows = ShopGenerator(orders=200).batch(0)
    assert len(rows["orders"]) == 200
    assert set(rows) == set(BRONZE_SCHEMAS)
    for table, table_rows in rows.items():
        assert table_rows, table
        assert {r["_op"] for r in table_rows} == {"I"}
        assert {r["_batch_id"] for r in table_rows} == {0}
        keys = [r[BRONZE_KEYS[table]] for r in table_rows]
        assert len(keys) == len(set(keys)), f"duplicate keys in {table}"


def test_change_batches_update_delete_and_carry_bad_rows():
    generator = ShopGenerator(orders=1000)
    batches = dict(generator.batches(2))
    initial_lines = {r["order_line_id"] for r in batches[0]["order_lines"]}
    for batch_id in (1, 2):
        batch = batches[batch_id]
        ops = {(table, r["_op"]) for table, rows in batch.items() for r in rows}
        assert {("orders", "I"), ("orders", "U"), ("customers", "U"), ("order_lines", "D")} <= ops
        assert any(r["quantity"] < 0 for r in batch["order_lines"])
        assert any(r["customer_id"] is None for r in batch["orders"])
    deleted = {r["order_line_id"] for r in batches[1]["order_lines"] if r["_op"] == "D"}
    assert deleted <= initial_lines


def test_late_arriving_orders_are_older_than_their_batch():
    batch = ShopGenerator(orders=1000).batch(1)
    late = [r for r in batch["orders"] if r["_op"] == "I" and r["ordered_at"] < r["_loaded_at"]]
    assert late


def test_payments_net_to_what_each_order_owes_and_carry_the_providers_json():
    """A paid order's payments net to its live lines' total (charged once, refunded when it
    loses a line), every other order's to nothing (a cancelled one refunded); each change
    batch carries one payment whose response was cut off, which is no part of that."""
    orders, lines, paid, kinds = {}, {}, {}, set()
    for batch_id, rows in ShopGenerator(orders=1000).batches(3):
        orders |= {r["order_id"]: r for r in rows["orders"] if r["customer_id"] is not None}
        for line in rows["order_lines"]:
            if line["_op"] == "D":
                del lines[line["order_line_id"]]
            elif line["quantity"] > 0:
                lines[line["order_line_id"]] = line
        cut_off = 0
        for payment in rows["payments"]:
            try:
                response = json.loads(payment["provider_response"])
            except ValueError:
                cut_off += 1
                continue
            assert response["amount"]["value"] == int(payment["amount"] * 100)
            kinds.add(response["kind"])
            paid[payment["order_id"]] = paid.get(payment["order_id"], 0) + payment["amount"]
        assert cut_off == (0 if batch_id == 0 else 1)
    totals: dict[int, Decimal] = {}
    for line in lines.values():
        totals[line["order_id"]] = (
            totals.get(line["order_id"], 0) + line["quantity"] * line["unit_price"]
        )
    for order_id, order in orders.items():
        owed = totals.get(order_id, 0) if order["status"] in PAID_STATUSES else 0
        assert paid.get(order_id, 0) == owed, order
    assert kinds == {"charge", "refund"}


def test_products_are_repriced_in_change_batches():
    batch = ShopGenerator(orders=1000).batch(1)
    assert {r["_op"] for r in batch["products"]} == {"U"}
