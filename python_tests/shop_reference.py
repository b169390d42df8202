"""Adversarial change batches for the shop's bronze tables, and an independent recompute of the
silver and gold tables from bronze rows, in plain Python (none of the project's SQL).

The batches concentrate on a few keys, so the cases the models' YAML documents happen often:
a bad newest change (NULL customer_id, status or ordered_at, quantity <= 0, NULL key or
updated_at, an unknown op), batch ids lower than an earlier batch's, repeated or NULL, keys
moving between parents, the largest quantities and prices of the bronze types,
late changes older than the state already merged, ties on updated_at inside a batch, deletes
followed by re-inserts in one batch and across batches, deletes of keys never seen, updates of
keys whose insert was quarantined, re-sent batches and batches that only delete.

The recompute states the documented rules once more, from scratch: per key, the newest good
change wins, ordered by updated_at, then batch id, then D > U > I, then the values (NULLs
lowest); a delete is kept as a tombstone in silver and leaves the key out of gold.
"""

from __future__ import annotations

import csv
import random
from collections import Counter, defaultdict
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from decimal import Decimal

from lakehouse.settings import PROJECT_DIR

Row = dict
START = datetime(2026, 3, 1, tzinfo=UTC)
STATUSES = ["placed", "paid", "shipped", "delivered", "cancelled"]
OP_RANK = {"I": 1, "U": 2, "D": 3}
MAX_QUANTITY = 2_147_483_647
MAX_PRICE = "99999999.99"
KEYS = {"customers": "customer_id", "orders": "order_id", "order_lines": "order_line_id"}
# The values that break ties after (updated_at, batch id, op), as the silver models rank them.
TIE_BREAK = {
    "customers": ["full_name", "email", "country_code", "created_at"],
    "orders": ["customer_id", "status", "ordered_at"],
    "order_lines": ["order_id", "product_id", "quantity", "unit_price"],
}


@dataclass(frozen=True)
class AdversarialBatches:
    """Deterministic batches 0..n for a seed; `batches(last)` as the shop generator's."""

    seed: int
    customers: int = 4
    orders: int = 8
    order_lines: int = 16

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
            rows = {table: [] for table in KEYS}
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
        else:
            row |= {
                "order_id": rng.randint(1, self.orders),  # moves the line between orders
                "product_id": rng.randint(1, 3),
                # the extremes of the bronze types: int, decimal(10,2)
                "quantity": rng.choice([-2, 0, 1, 1, 2, 3, None, MAX_QUANTITY]),
                "unit_price": Decimal(rng.choice(["1.50", "2.00", "9.99", MAX_PRICE])),
            }
        return row


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
    return None


def _staged(table: str, row: Row) -> Row:
    """The staging models' normalisation of a bronze row."""
    row = dict(row)
    if table == "customers":
        row["email"] = row["email"].lower() if row["email"] is not None else None
        row["country_code"] = row["country_code"].upper() if row["country_code"] else None
    elif table == "orders":
        row["status"] = row["status"].lower() if row["status"] is not None else None
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


def expected_tables(bronze: dict[str, list[Row]], statuses: dict[str, tuple]) -> dict[str, list]:
    """Every compared table as sorted tuples of the columns in COLUMNS."""
    customers = newest_good_changes("customers", bronze["customers"])
    orders = newest_good_changes("orders", bronze["orders"])
    lines = newest_good_changes("order_lines", bronze["order_lines"])
    for line in lines.values():
        quantity, price = line["quantity"], line["unit_price"]
        line["line_amount"] = None if quantity is None or price is None else quantity * price
    live_orders = {k: o for k, o in orders.items() if o["_op"] != "D"}
    live_lines = {k: line for k, line in lines.items() if line["_op"] != "D"}

    lines_of = defaultdict(list)
    for line in live_lines.values():
        lines_of[line["order_id"]].append(line)
    fct_orders = {}
    for order_id, order in live_orders.items():
        its_lines = lines_of[order_id]
        status_name, is_final = statuses.get(order["status"], (None, None))
        fct_orders[order_id] = (
            order_id, order["customer_id"], order["status"], status_name, is_final,
            len(its_lines), sum(line["quantity"] for line in its_lines),
            sum((line["line_amount"] for line in its_lines), Decimal(0)),
            order["ordered_at"], order["ordered_at"].date(), order["updated_at"],
        )  # fmt: skip

    daily: dict = defaultdict(lambda: [set(), 0, Decimal(0)])
    for line in live_lines.values():
        order = live_orders.get(line["order_id"])
        if order is not None and order["status"] != "cancelled":
            day = daily[order["ordered_at"].date()]
            day[0].add(order["order_id"])
            day[1] += 1
            day[2] += line["line_amount"]

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
        "fct_daily_revenue": sorted_rows((d, len(v[0]), v[1], v[2]) for d, v in daily.items()),
        "fct_customer_revenue": sorted_rows((k, *v) for k, v in per_customer.items()),
        "int_shop_rows_quarantined": expected_quarantine(bronze),
    }  # fmt: skip


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
    "item_count, order_amount, ordered_at, order_date, updated_at",
    "fct_order_lines": "order_line_id, order_id, product_id, quantity, unit_price, line_amount, "
    "updated_at",
    "fct_daily_revenue": "order_date, order_count, line_count, revenue",
    "fct_customer_revenue": "customer_id, order_count, revenue, first_ordered_at, last_ordered_at",
    "int_shop_rows_quarantined": "source_table, record_id, rejection_reason, batch_id, occurrences",
}


def order_statuses() -> dict[str, tuple]:
    """The order_statuses seed: status -> (status_name, is_final)."""
    with open(PROJECT_DIR / "seeds" / "order_statuses.csv") as seed:
        return {
            r["status"]: (r["status_name"], r["is_final"] == "true") for r in csv.DictReader(seed)
        }


def utc(value):
    """Spark returns UTC timestamps (the session's time zone) without a zone; delta-rs with one."""
    return value.replace(tzinfo=UTC) if isinstance(value, datetime) else value
