"""Deterministic online-shop data: an initial load (batch 0) and numbered change batches.

Bronze (landing) tables are append-only change logs: every row carries the operation that
produced it (`_op`: I insert, U update, D delete), the batch it arrived in (`_batch_id`) and
when it landed (`_loaded_at`). The same (scale, seed, batch) always yields the same rows, so
tests and benchmarks can rebuild any state. Pure Python: no Spark needed to generate.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

# Timezone-aware, so Spark stores the same instants whatever the machine's local zone.
EPOCH = datetime(2026, 1, 1, tzinfo=UTC)
COUNTRIES = ["NL", "DE", "FR", "BE", "ES", "IT", "GB", "US", "SE", "PL"]
CATEGORIES = ["books", "games", "garden", "kitchen", "music", "outdoor", "toys"]
STATUSES = ["placed", "paid", "shipped", "delivered", "cancelled"]
PAYMENT_METHODS = ["card", "ideal", "paypal", "gift_card"]

# Bronze table name -> its columns, in order; the change-log columns follow (bronze_columns).
CHANGE_LOG_COLUMNS = [("_op", "string"), ("_batch_id", "int"), ("_loaded_at", "timestamp")]
BRONZE_SCHEMAS: dict[str, list[tuple[str, str]]] = {
    "customers": [
        ("customer_id", "bigint"),
        ("full_name", "string"),
        ("email", "string"),
        ("country_code", "string"),
        ("created_at", "timestamp"),
        ("updated_at", "timestamp"),
    ],
    "products": [
        ("product_id", "bigint"),
        ("product_name", "string"),
        ("category", "string"),
        ("unit_price", "decimal(10,2)"),
        ("updated_at", "timestamp"),
    ],
    "orders": [
        ("order_id", "bigint"),
        ("customer_id", "bigint"),
        ("status", "string"),
        ("ordered_at", "timestamp"),
        ("updated_at", "timestamp"),
    ],
    "order_lines": [
        ("order_line_id", "bigint"),
        ("order_id", "bigint"),
        ("product_id", "bigint"),
        ("quantity", "int"),
        ("unit_price", "decimal(10,2)"),
        ("updated_at", "timestamp"),
    ],
    "payments": [
        ("payment_id", "bigint"),
        ("order_id", "bigint"),
        ("payment_method", "string"),
        ("amount", "decimal(12,2)"),
        ("paid_at", "timestamp"),
        ("updated_at", "timestamp"),
    ],
}
BRONZE_KEYS = {
    "customers": "customer_id",
    "products": "product_id",
    "orders": "order_id",
    "order_lines": "order_line_id",
    "payments": "payment_id",
}


def bronze_columns(table: str) -> list[tuple[str, str]]:
    return BRONZE_SCHEMAS[table] + CHANGE_LOG_COLUMNS


def bronze_ddl_schema(table: str) -> str:
    return ", ".join(f"{name} {dtype}" for name, dtype in bronze_columns(table))


@dataclass(frozen=True)
class Scale:
    """Sizes derived from the number of orders (about 3 order lines per order)."""

    orders: int

    @property
    def customers(self) -> int:
        return max(10, self.orders // 5)

    @property
    def products(self) -> int:
        return max(20, min(2000, self.orders // 50))


Row = dict[str, object]


class ShopGenerator:
    """Builds batch 0 (initial load) and change batches 1..n of the shop's bronze tables.

    A change batch is generated from the state left by the previous batches, so batches must
    be generated in order; `batch(n)` replays 0..n-1 internally (cheap: pure Python).
    """

    def __init__(self, orders: int = 1000, seed: int = 42, change_fraction: float = 0.01):
        self.scale = Scale(orders)
        self.seed = seed
        self.change_fraction = change_fraction

    def batches(self, last: int):
        """Yield (batch_id, rows by bronze table) for batches 0..last, in order."""
        state = _State()
        for batch_id in range(last + 1):
            rows = self._initial(state) if batch_id == 0 else self._changes(state, batch_id)
            yield batch_id, rows

    def batch(self, batch_id: int) -> dict[str, list[Row]]:
        return list(self.batches(batch_id))[-1][1]

    # -- batch 0 -------------------------------------------------------------------------------
    def _initial(self, state: _State) -> dict[str, list[Row]]:
        rng = random.Random(self.seed)
        out = _Batch(0, EPOCH + timedelta(days=30))
        for _ in range(self.scale.customers):
            out.add("customers", "I", state.new_customer(rng))
        for _ in range(self.scale.products):
            out.add("products", "I", state.new_product(rng))
        for _ in range(self.scale.orders):
            self._new_order(rng, state, out)
        return out.rows

    # -- batches 1..n --------------------------------------------------------------------------
    def _changes(self, state: _State, batch_id: int) -> dict[str, list[Row]]:
        rng = random.Random(self.seed * 1000 + batch_id)
        loaded_at = EPOCH + timedelta(days=30 + batch_id)
        out = _Batch(batch_id, loaded_at)
        n = max(1, int(self.scale.orders * self.change_fraction))
        for _ in range(max(1, n // 5)):
            out.add("customers", "I", state.new_customer(rng, loaded_at))
        for customer in rng.sample(
            sorted(state.customers), min(len(state.customers), max(1, n // 5))
        ):
            row = state.customers[customer]
            row.update(email=f"c{customer}.{batch_id}@example.com", updated_at=loaded_at)
            out.add("customers", "U", row)
        for _ in range(n):
            self._new_order(rng, state, out, loaded_at)
        open_orders = sorted(o for o, r in state.orders.items() if r["status"] != "cancelled")
        for order_id in rng.sample(open_orders, min(len(open_orders), n)):
            row = state.orders[order_id]
            row.update(status=_next_status(rng, row["status"]), updated_at=loaded_at)
            out.add("orders", "U", row)
        # A few order lines are deleted (the customer removed an item) ...
        for line_id in rng.sample(
            sorted(state.order_lines), min(len(state.order_lines), max(1, n // 4))
        ):
            out.add("order_lines", "D", state.order_lines.pop(line_id))
        # ... and a few late-arriving orders carry an order date from weeks ago.
        for _ in range(max(1, n // 10)):
            self._new_order(rng, state, out, loaded_at - timedelta(days=rng.randint(7, 28)))
        # Bad rows the pipeline must catch: an order line with a negative quantity and an
        # order without a customer. They never become part of the valid state.
        out.add("order_lines", "I", state.bad_order_line(rng, loaded_at))
        out.add("orders", "I", state.bad_order(loaded_at))
        return out.rows

    def _new_order(
        self, rng: random.Random, state: _State, out: _Batch, at: datetime | None = None
    ) -> None:
        order = state.new_order(rng, at)
        out.add("orders", "I", order)
        lines = [state.new_order_line(rng, order) for _ in range(rng.randint(1, 5))]
        for line in lines:
            out.add("order_lines", "I", line)
        if order["status"] != "placed":
            out.add("payments", "I", state.new_payment(rng, order, lines))


def _next_status(rng: random.Random, status: str) -> str:
    flow = {"placed": "paid", "paid": "shipped", "shipped": "delivered", "delivered": "delivered"}
    return "cancelled" if rng.random() < 0.1 else flow.get(status, status)


class _Batch:
    def __init__(self, batch_id: int, loaded_at: datetime):
        self.batch_id = batch_id
        self.loaded_at = loaded_at
        self.rows: dict[str, list[Row]] = {table: [] for table in BRONZE_SCHEMAS}

    def add(self, table: str, op: str, row: Row) -> None:
        self.rows[table].append(
            {**row, "_op": op, "_batch_id": self.batch_id, "_loaded_at": self.loaded_at}
        )


class _State:
    """The valid current state of the shop, advanced batch by batch."""

    def __init__(self) -> None:
        self.customers: dict[int, Row] = {}
        self.products: dict[int, Row] = {}
        self.orders: dict[int, Row] = {}
        self.order_lines: dict[int, Row] = {}
        self.next_id = {table: 1 for table in BRONZE_SCHEMAS}

    def _id(self, table: str) -> int:
        value = self.next_id[table]
        self.next_id[table] += 1
        return value

    def new_customer(self, rng: random.Random, at: datetime | None = None) -> Row:
        customer_id = self._id("customers")
        created = at or EPOCH + timedelta(minutes=rng.randint(0, 60 * 24 * 20))
        row = {
            "customer_id": customer_id,
            "full_name": f"Customer {customer_id}",
            "email": f"c{customer_id}@example.com",
            "country_code": rng.choice(COUNTRIES),
            "created_at": created,
            "updated_at": created,
        }
        self.customers[customer_id] = row
        return dict(row)

    def new_product(self, rng: random.Random) -> Row:
        product_id = self._id("products")
        row = {
            "product_id": product_id,
            "product_name": f"Product {product_id}",
            "category": rng.choice(CATEGORIES),
            "unit_price": _money(rng.uniform(2, 200)),
            "updated_at": EPOCH,
        }
        self.products[product_id] = row
        return dict(row)

    def new_order(self, rng: random.Random, at: datetime | None) -> Row:
        order_id = self._id("orders")
        ordered = at or EPOCH + timedelta(minutes=rng.randint(0, 60 * 24 * 29))
        row = {
            "order_id": order_id,
            "customer_id": rng.randint(1, len(self.customers)),  # customers are never deleted
            "status": rng.choice(STATUSES[:4]),
            "ordered_at": ordered,
            "updated_at": ordered,
        }
        self.orders[order_id] = row
        return dict(row)

    def new_order_line(self, rng: random.Random, order: Row) -> Row:
        product = self.products[rng.randint(1, len(self.products))]
        line_id = self._id("order_lines")
        row = {
            "order_line_id": line_id,
            "order_id": order["order_id"],
            "product_id": product["product_id"],
            "quantity": rng.randint(1, 4),
            "unit_price": product["unit_price"],
            "updated_at": order["ordered_at"],
        }
        self.order_lines[line_id] = row
        return dict(row)

    def new_payment(self, rng: random.Random, order: Row, lines: list[Row]) -> Row:
        return {
            "payment_id": self._id("payments"),
            "order_id": order["order_id"],
            "payment_method": rng.choice(PAYMENT_METHODS),
            "amount": sum((r["unit_price"] * r["quantity"] for r in lines), _money(0)),
            "paid_at": order["ordered_at"] + timedelta(minutes=5),
            "updated_at": order["ordered_at"] + timedelta(minutes=5),
        }

    def bad_order_line(self, rng: random.Random, at: datetime) -> Row:
        order_id = rng.choice(sorted(self.orders))
        return {
            "order_line_id": self._id("order_lines"),
            "order_id": order_id,
            "product_id": 1,
            "quantity": -rng.randint(1, 3),
            "unit_price": self.products[1]["unit_price"],
            "updated_at": at,
        }

    def bad_order(self, at: datetime) -> Row:
        return {
            "order_id": self._id("orders"),
            "customer_id": None,
            "status": "placed",
            "ordered_at": at,
            "updated_at": at,
        }


def _money(value: float):
    from decimal import ROUND_HALF_UP, Decimal

    return Decimal(str(value)).quantize(Decimal("0.01"), rounding=ROUND_HALF_UP)
