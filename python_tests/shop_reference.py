"""Adversarial change batches for the shop's bronze tables, and an independent recompute of the
silver and gold tables from bronze rows, in plain Python (none of the project's SQL).

The batches concentrate on a few keys, so the cases the models' YAML documents happen often:
a bad newest change (NULL customer_id, status or ordered_at, quantity <= 0, a product's price
missing or negative, a payment's order or amount NULL or its provider response not JSON, NULL
key or updated_at, an unknown op), batch ids lower than an earlier batch's, repeated or NULL,
keys moving between parents (lines and payments between orders), refunds, the largest
quantities and prices of the bronze types,
late changes older than the state already merged, ties on updated_at inside a batch, deletes
followed by re-inserts in one batch and across batches, deletes of keys never seen, updates of
keys whose insert was quarantined, re-sent batches and batches that only delete.

The recompute states the documented rules once more, from scratch: per key, the newest good
change wins, ordered by updated_at, then batch id, then D > U > I, then the values (NULLs
lowest); a delete is kept as a tombstone in silver and leaves the key out of gold.
"""

from __future__ import annotations

import csv
import json
import random
from collections import Counter, defaultdict
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from zoneinfo import ZoneInfo

from lakehouse.settings import PROJECT_DIR

Row = dict
START = datetime(2026, 3, 1, tzinfo=UTC)
STATUSES = ["placed", "paid", "shipped", "delivered", "cancelled"]
OP_RANK = {"I": 1, "U": 2, "D": 3}
MAX_QUANTITY = 2_147_483_647
MAX_PRICE = "99999999.99"
CENT = Decimal("0.01")
KEYS = {
    "customers": "customer_id",
    "orders": "order_id",
    "order_lines": "order_line_id",
    "products": "product_id",
    "payments": "payment_id",
}
# The values that break ties after (updated_at, batch id, op), as the silver models rank them.
TIE_BREAK = {
    "customers": ["full_name", "email", "country_code", "created_at"],
    "orders": ["customer_id", "status", "ordered_at"],
    "order_lines": ["order_id", "product_id", "quantity", "unit_price"],
    "products": ["product_name", "category", "unit_price"],
    "payments": ["order_id", "payment_method", "amount", "paid_at", "provider_response"],
}


@dataclass(frozen=True)
class AdversarialBatches:
    """Deterministic batches 0..n for a seed; `batches(last)` as the shop generator's."""

    seed: int
    customers: int = 4
    orders: int = 8
    order_lines: int = 16
    products: int = 3
    payments: int = 6

    def batches(self, last: int) -> Iterator[tuple[int, dict[str, list[Row]]]]:
        for batch_id in range(last + 1):
            yield batch_id, self.batch(batch_id)

    def batch(self, batch_id: int) -> dict[str, list[Row]]:
        rng = random.Random(f"{self.seed}:{batch_id}")
        loaded_at = START + timedelta(days=batch_id)
        kind = "initial" if batch_id == 0 else rng.choice(["mixed"] * 6 + ["deletes", "resend"])
        if kind == "resend":  # an earlier batch again, under this batch's id
            rows = self.batch(rng.randrange(batch_id))
        else:
            rows = self._money_changes(batch_id, kind)
            rows |= {table: [] for table in self._sizes()}
            changes = 0 if kind == "initial" else rng.randint(4, 12)
            if kind == "initial":
                for table, count in self._sizes().items():
                    for key in range(1, count + 1):
                        rows[table].append(self._change(rng, table, key, "I", batch_id))
            for _ in range(changes):
                table = rng.choice(["customers", "orders", "orders", "order_lines", "order_lines"])
                key = rng.randint(1, self._sizes()[table] + 2)  # + 2: keys never inserted
                op = "D" if kind == "deletes" else rng.choice("IUUUD")
                rows[table].append(self._change(rng, table, key, op, batch_id))
                if op == "D" and rng.random() < 0.3:  # re-inserted in the same batch
                    rows[table].append(self._change(rng, table, key, "I", batch_id))
        labels = random.Random(f"{self.seed}:{batch_id}:label")  # the contents' draws unmoved
        label = self._label(labels, batch_id)
        return {
            table: [
                {**row, "_batch_id": labels.choice([label] * 30 + [None]), "_loaded_at": loaded_at}
                for row in table_rows
            ]
            for table, table_rows in rows.items()
        }

    @staticmethod
    def _label(rng: random.Random, batch_id: int) -> int | None:
        """The batch id written in the rows: writers promise no order, so it is sometimes lower
        than an earlier batch's (a backfill, a second loader), repeats one, or is missing."""
        kind = rng.choice(["own"] * 5 + ["lower", "repeat", "none"])
        if batch_id == 0 or kind == "own":
            return batch_id
        if kind == "lower":
            return rng.randrange(batch_id)
        return batch_id - 1 if kind == "repeat" else None

    def _sizes(self) -> dict[str, int]:
        return {"customers": self.customers, "orders": self.orders, "order_lines": self.order_lines}

    def _money_changes(self, batch_id: int, kind: str) -> dict[str, list[Row]]:
        """The products' and payments' changes of a batch, drawn apart from the other tables'
        (whose draws stay as they were before these tables were added)."""
        rng = random.Random(f"{self.seed}:{batch_id}:money")
        sizes = {"products": self.products, "payments": self.payments}
        rows: dict[str, list[Row]] = {table: [] for table in sizes}
        if kind == "initial":
            for table, count in sizes.items():
                for key in range(1, count + 1):
                    rows[table].append(self._change(rng, table, key, "I", batch_id))
            return rows
        for _ in range(rng.randint(1, 5)):
            table = rng.choice(["products", "payments", "payments"])
            key = rng.randint(1, sizes[table] + 1)  # + 1: a key never inserted
            op = "D" if kind == "deletes" else rng.choice("IUUUD")
            rows[table].append(self._change(rng, table, key, op, batch_id))
        return rows

    def _change(self, rng: random.Random, table: str, key: int, op: str, batch_id: int) -> Row:
        # Few distinct instants: ties inside a batch, and changes older than merged state.
        updated_at = START + timedelta(hours=batch_id + rng.choice([-30, -1, 0, 0, 1]))
        row: Row = {KEYS[table]: key, "_op": op, "updated_at": updated_at}
        if rng.random() < 0.04:
            row[KEYS[table]] = None
        if rng.random() < 0.04:
            row["updated_at"] = None
        if rng.random() < 0.03:
            row["_op"] = rng.choice(["X", None])
        day = START - timedelta(days=rng.randint(0, 2), hours=rng.randint(0, 23))
        if table == "customers":
            row |= {
                "full_name": rng.choice(["Ann O'Neil", "Bo", "Cy"]),
                "email": rng.choice(["ann@x.nl", "BO@X.NL", "cy@x.de"]),
                "country_code": rng.choice(["nl", "DE"]),
                "created_at": day,
            }
        elif table == "orders":
            customer = None if rng.random() < 0.15 else rng.randint(1, self.customers)
            status = rng.choice([*STATUSES, None])
            row |= {
                "customer_id": customer,  # moves the order between customers
                "status": status.upper() if status and rng.random() < 0.2 else status,
                "ordered_at": None if rng.random() < 0.06 else day,
            }
        elif table == "products":
            row |= {
                "product_name": rng.choice(["Mug", "Tea 'Earl Grey'", 'Pot "XL"']),
                "category": rng.choice(["Kitchen", "kitchen", "tea", None]),
                "unit_price": rng.choice([None, "-1.00", "0.00", "4.50", MAX_PRICE]),
            }
            if row["unit_price"] is not None:
                row["unit_price"] = Decimal(row["unit_price"])
        elif table == "payments":
            amount = rng.choice([None, "0.00", "10.00", "-10.00", "864.78"])  # < 0: a refund
            row |= {
                # moves the payment between orders
                "order_id": None if rng.random() < 0.1 else rng.randint(1, self.orders),
                "payment_method": rng.choice(["card", "CARD", "ideal", "paypal"]),
                "amount": None if amount is None else Decimal(amount),
                "paid_at": day,
                "provider_response": _provider_response(rng, key, amount),
            }
        else:
            row |= {
                "order_id": rng.randint(1, self.orders),  # moves the line between orders
                "product_id": rng.randint(1, 3),
                # the extremes of the bronze types: int, decimal(10,2)
                "quantity": rng.choice([-2, 0, 1, 1, 2, 3, None, MAX_QUANTITY]),
                "unit_price": Decimal(rng.choice(["1.50", "2.00", "9.99", MAX_PRICE])),
            }
        return row


def _provider_response(rng: random.Random, payment_id: int, amount: str | None) -> str | None:
    """A payment provider's answer: JSON with or without each optional part (and quotes in a
    string), or cut off in transit, or missing."""
    response: dict = {
        "provider": rng.choice(["adyen", "mollie"]),
        "psp_reference": f'PSP "{payment_id}" O\'Neil',
        "kind": "refund" if amount and amount.startswith("-") else "charge",
    }
    if rng.random() < 0.6:
        response["payment_method"] = {"card": {"brand": rng.choice(["visa", "mastercard"])}}
    if rng.random() < 0.5:
        response["three_d_secure"] = {"result": rng.choice(["authenticated", "attempted"])}
    if rng.random() < 0.7:
        response["risk"] = {"score": rng.choice([0.0, 12.5, 99.9])}
    if rng.random() < 0.7:
        response["fees"] = {"processing": rng.choice([0.25, 1.6, 12.1])}
    if rng.random() < 0.7:
        response["events"] = [{"type": "captured"}] * rng.randint(0, 2)
    text = json.dumps(response)
    return rng.choice([text] * 6 + [text[: len(text) // 2], None])


# --- the independent recompute ---------------------------------------------------------------


def rejection(table: str, row: Row) -> str | None:
    """Why a bronze change cannot be loaded (None when it can), as the models' YAML says."""
    key = KEYS[table]
    if row["_op"] not in OP_RANK:
        return "change_op is not I, U or D"
    if row[key] is None:
        return f"{key} is null"
    if row["updated_at"] is None:
        return "updated_at is null"
    if table == "orders" and row["_op"] != "D":
        for column in ("customer_id", "status", "ordered_at"):
            if row[column] is None:
                return f"{column} is null"
    if table == "order_lines" and row["_op"] != "D" and not (row["quantity"] or 0) > 0:
        return "quantity is not positive"
    if table == "products" and row["_op"] != "D":
        if row["unit_price"] is None or row["unit_price"] < 0:
            return "unit_price is missing or negative"
    if table == "payments" and row["_op"] != "D":
        if row["order_id"] is None:
            return "order_id is null"
        if row["amount"] is None:
            return "amount is null"
        if parsed_json(row["provider_response"]) is None:
            return "provider_response is missing or not JSON"
    return None


def parsed_json(text: str | None):
    """The document a JSON text holds; None for a missing text or one that is not JSON."""
    try:
        return None if text is None else json.loads(text)
    except ValueError:
        return None


def canonical_json(text: str | None) -> str | None:
    """One spelling of a JSON document (sorted keys, every number a float): Spark's to_json of
    a VARIANT (which writes 88.0 as 88) and the provider's text compare equal when they hold
    the same document."""
    if parsed_json(text) is None:
        return None
    return json.dumps(json.loads(text, parse_int=float), sort_keys=True)


def _staged(table: str, row: Row) -> Row:
    """The staging models' normalisation of a bronze row."""
    row = dict(row)
    if table == "customers":
        row["email"] = row["email"].lower() if row["email"] is not None else None
        row["country_code"] = row["country_code"].upper() if row["country_code"] else None
    elif table == "orders":
        row["status"] = row["status"].lower() if row["status"] is not None else None
    elif table == "products":
        row["category"] = row["category"].lower() if row["category"] is not None else None
    elif table == "payments":
        method = row["payment_method"]
        row["payment_method"] = method.lower() if method is not None else None
    return row


def _rank(table: str, row: Row) -> tuple:
    def value(v):  # NULLs rank lowest
        return (0,) if v is None else (1, v)

    return (
        row["updated_at"],
        value(row["_batch_id"]),
        OP_RANK[row["_op"]],
        *(value(row[column]) for column in TIE_BREAK[table]),
    )


def newest_good_changes(table: str, bronze: list[Row]) -> dict[int, Row]:
    """Per key, the newest good change (deletes included)."""
    newest: dict[int, Row] = {}
    for row in bronze:
        if rejection(table, row) is None:
            row = _staged(table, row)
            key = row[KEYS[table]]
            if key not in newest or _rank(table, row) > _rank(table, newest[key]):
                newest[key] = row
    return newest


def _live(state: dict[int, Row]) -> dict[int, Row]:
    """The keys whose newest good change is not a delete."""
    return {key: row for key, row in state.items() if row["_op"] != "D"}


def _field(document, path: str, convert=lambda value: value):
    """variant_get(document, '$.<path>', type): NULL where the path is missing."""
    for step in path.split("."):
        if not isinstance(document, dict) or step not in document:
            return None
        document = document[step]
    return None if document is None else convert(document)


def expected_tables(bronze: dict[str, list[Row]]) -> dict[str, list]:
    """Every compared table as sorted tuples of the columns in COLUMNS."""
    statuses = order_statuses()
    time_zones = {code: row["time_zone"] for code, row in country_codes().items()}
    customers = newest_good_changes("customers", bronze["customers"])
    orders = newest_good_changes("orders", bronze["orders"])
    lines = newest_good_changes("order_lines", bronze["order_lines"])
    products = newest_good_changes("products", bronze["products"])
    payments = newest_good_changes("payments", bronze["payments"])
    for line in lines.values():
        quantity, price = line["quantity"], line["unit_price"]
        line["line_amount"] = None if quantity is None or price is None else quantity * price
    live_customers, live_orders, live_lines = _live(customers), _live(orders), _live(lines)
    live_products, live_payments = _live(products), _live(payments)

    def local_time(order: Row):
        """convert_timezone to the customer's country's zone, a TIMESTAMP_NTZ (read as UTC by
        utc(), as the compared rows are)."""
        customer = live_customers.get(order["customer_id"])
        zone = time_zones.get(customer["country_code"]) if customer else None
        if zone is None:
            return None
        return order["ordered_at"].astimezone(ZoneInfo(zone)).replace(tzinfo=UTC)

    lines_of = defaultdict(list)
    for line in live_lines.values():
        lines_of[line["order_id"]].append(line)
    fct_orders = {}
    for order_id, order in live_orders.items():
        its_lines = lines_of[order_id]
        status_name, is_final, _ = statuses.get(order["status"], (None, None, None))
        fct_orders[order_id] = (
            order_id, order["customer_id"], order["status"], status_name, is_final,
            len(its_lines), sum(line["quantity"] for line in its_lines),
            sum((line["line_amount"] for line in its_lines), Decimal(0)),
            order["ordered_at"], order["ordered_at"].date(), order["updated_at"],
            local_time(order),
        )  # fmt: skip

    fct_payments = {}
    for payment_id, p in live_payments.items():
        response = parsed_json(p["provider_response"])
        events = _field(response, "events", len)
        fct_payments[payment_id] = (
            payment_id, p["order_id"], _field(response, "psp_reference"),
            _field(response, "kind"), p["payment_method"], _field(response, "provider"),
            _field(response, "payment_method.card.brand"),
            _field(response, "three_d_secure.result"), _field(response, "risk.score", float),
            events, p["amount"],
            _field(response, "fees.processing", lambda v: Decimal(str(v)).quantize(CENT)),
            p["paid_at"], p["updated_at"],
        )  # fmt: skip

    amounts_of = defaultdict(list)
    for p in live_payments.values():
        amounts_of[p["order_id"]].append(p["amount"])
    order_payments = []
    for order_id, row in fct_orders.items():
        status, order_amount, amounts = row[2], row[7], amounts_of[order_id]
        due = order_amount if statuses.get(status, (None, None, None))[2] else Decimal(0)
        charged = sum((a for a in amounts if a > 0), Decimal(0))
        refunded = sum((-a for a in amounts if a < 0), Decimal(0))
        paid = sum(amounts, Decimal(0))
        if paid == due:
            state = "settled" if due > 0 else "refunded" if charged > 0 else "not due"
        else:
            state = "unpaid" if paid == 0 else "overpaid" if paid > due else "underpaid"
        order_payments.append(
            (order_id, status, state, order_amount, due, charged, refunded, paid, due - paid,
             len(amounts))
        )  # fmt: skip

    by_category: dict = defaultdict(lambda: [set(), 0, Decimal(0)])
    for line in live_lines.values():
        order = live_orders.get(line["order_id"])
        if order is not None and order["status"] != "cancelled":
            product = live_products.get(line["product_id"])
            category = (product or {}).get("category") or "unknown"
            entry = by_category[(order["ordered_at"].date(), category)]
            entry[0].add(order["order_id"])
            entry[1] += line["quantity"]
            entry[2] += line["line_amount"]

    per_customer: dict = {}
    for row in fct_orders.values():
        if row[2] == "cancelled":
            continue
        count, revenue, first, last = per_customer.get(row[1], (0, Decimal(0), row[8], row[8]))
        per_customer[row[1]] = (count + 1, revenue + row[7], min(first, row[8]), max(last, row[8]))

    def tombstone(row: Row) -> bool:
        return row["_op"] == "D"

    return {
        "int_customers_deduplicated": sorted_rows(
            (k, c["full_name"], c["email"], c["country_code"], c["created_at"], c["updated_at"],
             c["_batch_id"])
            for k, c in customers.items() if not tombstone(c)
        ),
        "int_orders_deduplicated": sorted_rows(
            (k, o["customer_id"], o["status"], o["ordered_at"], o["updated_at"], tombstone(o),
             o["_batch_id"])
            for k, o in orders.items()
        ),
        "int_order_lines_deduplicated": sorted_rows(
            (k, x["order_id"], x["product_id"], x["quantity"], x["unit_price"], x["line_amount"],
             x["updated_at"], tombstone(x), x["_batch_id"])
            for k, x in lines.items()
        ),
        "fct_orders": sorted_rows(fct_orders.values()),
        "fct_order_lines": sorted_rows(
            (k, x["order_id"], x["product_id"], x["quantity"], x["unit_price"], x["line_amount"],
             x["updated_at"])
            for k, x in live_lines.items()
        ),
        "fct_daily_revenue": daily_revenue(live_lines.values(), live_orders),
        "fct_customer_revenue": sorted_rows((k, *v) for k, v in per_customer.items()),
        "int_products_deduplicated": sorted_rows(
            (k, p["product_name"], p["category"], p["unit_price"], p["updated_at"], tombstone(p),
             p["_batch_id"])
            for k, p in products.items()
        ),
        "int_payments_deduplicated": sorted_rows(
            (k, p["order_id"], p["payment_method"], p["amount"], p["paid_at"], p["updated_at"],
             canonical_json(p["provider_response"]), tombstone(p), p["_batch_id"])
            for k, p in payments.items()
        ),
        "dim_products": sorted_rows(
            (k, p["product_name"], p["category"], p["unit_price"], p["updated_at"])
            for k, p in live_products.items()
        ),
        "fct_payments": sorted_rows(fct_payments.values()),
        "fct_order_payments": sorted_rows(order_payments),
        "fct_category_revenue": sorted_rows(
            (day, category, len(v[0]), v[1], v[2]) for (day, category), v in by_category.items()
        ),
        "int_shop_rows_quarantined": expected_quarantine(bronze),
    }  # fmt: skip


def daily_revenue(live_lines, live_orders: dict[int, Row]) -> list[tuple]:
    """fct_daily_revenue, (order_date, order_count, line_count, revenue): the live lines of the
    live orders that are not cancelled, per order date."""
    daily: dict = defaultdict(lambda: [set(), 0, Decimal(0)])
    for line in live_lines:
        order = live_orders.get(line["order_id"])
        if order is not None and order["status"] != "cancelled":
            day = daily[order["ordered_at"].date()]
            day[0].add(order["order_id"])
            day[1] += 1
            day[2] += line["line_amount"]
    return sorted_rows((d, len(v[0]), v[1], v[2]) for d, v in daily.items())


def expected_quarantine(bronze: dict[str, list[Row]]) -> list[tuple]:
    """(table, key, reason, batch id, occurrences): one entry per distinct bad record and batch."""
    counted: Counter = Counter()
    for table, rows in bronze.items():
        for row in rows:
            reason = rejection(table, row)
            if reason is not None:
                record = tuple(sorted((k, str(v)) for k, v in _staged(table, row).items()))
                counted[(table, row[KEYS[table]], reason, row["_batch_id"], record)] += 1
    return sorted_rows((t, k, reason, b, n) for (t, k, reason, b, _), n in counted.items())


def sorted_rows(rows) -> list[tuple]:
    """Rows in a total order, NULLs first (plain sorting cannot compare None with a value)."""
    return sorted(rows, key=lambda row: tuple((0, 0) if v is None else (1, v) for v in row))


# The compared columns of each table, in the order of the tuples above.
COLUMNS = {
    "int_customers_deduplicated": "customer_id, full_name, email, country_code, created_at, "
    "updated_at, batch_id",
    "int_orders_deduplicated": "order_id, customer_id, status, ordered_at, updated_at, is_deleted, "
    "batch_id",
    "int_order_lines_deduplicated": "order_line_id, order_id, product_id, quantity, unit_price, "
    "line_amount, updated_at, is_deleted, batch_id",
    "fct_orders": "order_id, customer_id, status, status_name, is_status_final, line_count, "
    "item_count, order_amount, ordered_at, order_date, updated_at, ordered_at_local",
    "fct_order_lines": "order_line_id, order_id, product_id, quantity, unit_price, line_amount, "
    "updated_at",
    "fct_daily_revenue": "order_date, order_count, line_count, revenue",
    "fct_customer_revenue": "customer_id, order_count, revenue, first_ordered_at, last_ordered_at",
    "int_products_deduplicated": "product_id, product_name, category, unit_price, updated_at, "
    "is_deleted, batch_id",
    # the VARIANT as JSON text, compared by canonical_json
    "int_payments_deduplicated": "payment_id, order_id, payment_method, amount, paid_at, "
    "updated_at, to_json(provider_response) as provider_response_json, is_deleted, batch_id",
    "dim_products": "product_id, product_name, category, unit_price, updated_at",
    "fct_payments": "payment_id, order_id, psp_reference, payment_kind, payment_method, provider, "
    "card_brand, three_ds_result, risk_score, event_count, amount, fee_amount, paid_at, "
    "updated_at",
    "fct_order_payments": "order_id, status, payment_state, order_amount, amount_due, "
    "amount_charged, amount_refunded, amount_paid, balance_due, payment_count",
    "fct_category_revenue": "order_date, category, order_count, item_count, revenue",
    "int_shop_rows_quarantined": "source_table, record_id, rejection_reason, batch_id, occurrences",
}


def order_statuses() -> dict[str, tuple]:
    """The order_statuses seed: status -> (status_name, is_final, is_paid)."""
    with open(PROJECT_DIR / "seeds" / "order_statuses.csv") as seed:
        return {
            r["status"]: (r["status_name"], r["is_final"] == "true", r["is_paid"] == "true")
            for r in csv.DictReader(seed)
        }


def country_codes() -> dict[str, dict]:
    """The country_codes seed: country code -> its row."""
    with open(PROJECT_DIR / "seeds" / "country_codes.csv") as seed:
        return {r["country_code"]: r for r in csv.DictReader(seed)}


def read_bronze(spark, schema: str) -> dict[str, list[Row]]:
    """The rows of each bronze table of `schema` as delta-rs reads them (Spark only names
    the table's location)."""
    from deltalake import DeltaTable

    rows = {}
    for table in KEYS:
        location = spark.sql(f"describe detail `{schema}`.`{table}`").first().location
        rows[table] = DeltaTable(location.removeprefix("file:")).to_pyarrow_table().to_pylist()
    return rows


def utc(value):
    """Spark returns UTC timestamps (the session's time zone) without a zone; delta-rs with one."""
    return value.replace(tzinfo=UTC) if isinstance(value, datetime) else value


def comparable(row) -> tuple:
    """A row Spark read from a COLUMNS select, as the recompute spells it: timestamps in UTC
    (utc), a VARIANT's JSON text (a column named *_json) in canonical_json."""
    return tuple(
        canonical_json(value) if name.endswith("_json") else utc(value)
        for name, value in zip(row.__fields__, row, strict=True)
    )
