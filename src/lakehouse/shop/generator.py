"""Deterministic online-shop data: an initial load (batch 0) and numbered change batches.

Bronze (landing) tables are append-only change logs: every row carries the operation that
produced it (`_op`: I insert, U update, D delete), the batch it arrived in (`_batch_id`) and
when it landed (`_loaded_at`). The same (scale, seed, batch) always yields the same rows, so
tests and benchmarks can rebuild any state. Pure Python: no Spark needed to generate.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from decimal import ROUND_HALF_UP, Decimal

# Timezone-aware, so Spark stores the same instants whatever the machine's local zone.
EPOCH = datetime(2026, 1, 1, tzinfo=UTC)
COUNTRIES = ["NL", "DE", "FR", "BE", "ES", "IT", "GB", "US", "SE", "PL"]
CATEGORIES = ["books", "games", "garden", "kitchen", "music", "outdoor", "toys"]
STATUSES = ["placed", "paid", "shipped", "delivered", "cancelled"]
PAID_STATUSES = {"paid", "shipped", "delivered"}  # an order in these is paid in full
PAYMENT_METHODS = ["card", "ideal", "paypal", "gift_card"]
PROVIDERS = {"card": "adyen", "ideal": "mollie", "paypal": "paypal", "gift_card": "giftcards"}
CARD_BRANDS = ["visa", "mastercard", "amex"]
THREE_DS_RESULTS = ["authenticated", "frictionless", "challenged", "attempted"]

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
        # the payment provider's raw response, a JSON document as received (silver: VARIANT)
        ("provider_response", "string"),
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
        out = _Batch(0, EPOCH + timedelta(days=30), self.seed)
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
        out = _Batch(batch_id, loaded_at, self.seed)
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
            self._settle(state, out, order_id, loaded_at)
        # A few order lines are deleted (the customer removed an item; a paid one is refunded) ...
        for line_id in rng.sample(
            sorted(state.order_lines), min(len(state.order_lines), max(1, n // 4))
        ):
            line = state.order_lines.pop(line_id)
            state.order_totals[line["order_id"]] -= line["unit_price"] * line["quantity"]
            out.add("order_lines", "D", line)
            self._settle(state, out, line["order_id"], loaded_at)
        # ... and a few late-arriving orders carry an order date from weeks ago.
        for _ in range(max(1, n // 10)):
            self._new_order(rng, state, out, loaded_at - timedelta(days=rng.randint(7, 28)))
        # Bad rows the pipeline must catch: an order line with a negative quantity and an
        # order without a customer. They never become part of the valid state.
        out.add("order_lines", "I", state.bad_order_line(rng, loaded_at))
        out.add("orders", "I", state.bad_order(loaded_at))
        # ... and a payment whose provider response arrived cut off (not JSON).
        out.add("payments", "I", state.truncated_payment(out.payment_draws, loaded_at))
        # Prices change: a few products are repriced (lines ordered later carry the new price).
        prices = random.Random(f"{self.seed}:{batch_id}:prices")  # the main draws unmoved
        for product_id in prices.sample(sorted(state.products), max(1, len(state.products) // 50)):
            row = state.products[product_id]
            row.update(unit_price=_money(prices.uniform(2, 200)), updated_at=loaded_at)
            out.add("products", "U", row)
        return out.rows

    def _settle(self, state: _State, out: _Batch, order_id: int, at: datetime) -> None:
        """The payment that brings what an order has been paid to what it owes: a paid order
        owes its live lines' total, any other order nothing (a cancelled one is refunded)."""
        order = state.orders[order_id]
        owed = state.order_totals[order_id] if order["status"] in PAID_STATUSES else _money(0)
        amount = owed - state.paid.get(order_id, _money(0))
        if amount:
            out.add("payments", "I", state.new_payment(out.payment_draws, order, amount, at))

    def _new_order(
        self, rng: random.Random, state: _State, out: _Batch, at: datetime | None = None
    ) -> None:
        order = state.new_order(rng, at)
        out.add("orders", "I", order)
        lines = [state.new_order_line(rng, order) for _ in range(rng.randint(1, 5))]
        for line in lines:
            out.add("order_lines", "I", line)
        if order["status"] != "placed":
            method = rng.choice(PAYMENT_METHODS)
            payment_at = order["ordered_at"] + timedelta(minutes=5)
            amount = state.order_totals[order["order_id"]]
            out.add(
                "payments",
                "I",
                state.new_payment(out.payment_draws, order, amount, payment_at, method),
            )


def _next_status(rng: random.Random, status: str) -> str:
    flow = {"placed": "paid", "paid": "shipped", "shipped": "delivered", "delivered": "delivered"}
    return "cancelled" if rng.random() < 0.1 else flow.get(status, status)


class _Batch:
    def __init__(self, batch_id: int, loaded_at: datetime, seed: int):
        self.batch_id = batch_id
        self.loaded_at = loaded_at
        # The payments' details (provider response, methods of later payments) are drawn from
        # their own stream, so the orders' and lines' draws are those of a shop without them.
        self.payment_draws = random.Random(f"{seed}:{batch_id}:payments")
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
        self.order_totals: dict[int, Decimal] = {}  # order -> its live lines' total
        self.paid: dict[int, Decimal] = {}  # order -> what it has been paid, refunds deducted
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
        self.order_totals[order_id] = _money(0)
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
        self.order_totals[order["order_id"]] += row["unit_price"] * row["quantity"]
        return dict(row)

    def new_payment(
        self,
        rng: random.Random,
        order: Row,
        amount: Decimal,
        at: datetime,
        method: str | None = None,
    ) -> Row:
        """A charge (amount > 0) or a refund (amount < 0) of an order, with the provider's
        response as it would arrive: nested JSON with the method, 3-D Secure, risk, fees and
        the payment's events."""
        payment_id = self._id("payments")
        method = method or rng.choice(PAYMENT_METHODS)
        self.paid[order["order_id"]] = self.paid.get(order["order_id"], _money(0)) + amount
        response = _provider_response(rng, payment_id, method, amount, at)
        return {
            "payment_id": payment_id,
            "order_id": order["order_id"],
            "payment_method": method,
            "amount": amount,
            "paid_at": at,
            "updated_at": at,
            "provider_response": json.dumps(response),
        }

    def truncated_payment(self, rng: random.Random, at: datetime) -> Row:
        """A payment of a paid order whose provider response was cut off in transit: never
        part of the valid state (it is not JSON), so the order stays paid once."""
        paid = sorted(o for o, amount in self.paid.items() if amount > 0)
        order = self.orders[rng.choice(paid)] if paid else next(iter(self.orders.values()))
        payment_id = self._id("payments")
        amount = self.order_totals[order["order_id"]]
        response = json.dumps(_provider_response(rng, payment_id, "card", amount, at))
        return {
            "payment_id": payment_id,
            "order_id": order["order_id"],
            "payment_method": "card",
            "amount": amount,
            "paid_at": at,
            "updated_at": at,
            "provider_response": response[: len(response) // 2],
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


def _provider_response(
    rng: random.Random, payment_id: int, method: str, amount: Decimal, at: datetime
) -> dict:
    """What a payment service provider answers about a charge or a refund (a realistic shape:
    nested objects, a list of events, numbers as JSON numbers)."""
    refund = amount < 0
    payment_method: dict = {"type": method}
    response: dict = {
        "provider": PROVIDERS[method],
        "psp_reference": f"{PROVIDERS[method][:3].upper()}{payment_id:012d}",
        "kind": "refund" if refund else "charge",
        "amount": {"value": int(amount * 100), "currency": "EUR"},
        "payment_method": payment_method,
    }
    if method == "card":
        payment_method["card"] = {
            "brand": rng.choice(CARD_BRANDS),
            "last4": f"{rng.randint(0, 9999):04d}",
            "expiry": {"month": rng.randint(1, 12), "year": rng.randint(2026, 2031)},
        }
        if not refund:
            response["three_d_secure"] = {
                "version": "2.2.0",
                "result": rng.choice(THREE_DS_RESULTS),
            }
    response["risk"] = {"score": round(rng.uniform(0, 100), 1), "checks": rng.randint(3, 12)}
    fee = (abs(amount) * Decimal("0.014") + Decimal("0.25")).quantize(Decimal("0.01"))
    response["fees"] = {"processing": float(fee), "currency": "EUR"}
    steps = ["refund_requested", "refunded"] if refund else ["authorised", "captured"]
    response["events"] = [
        {"type": step, "at": (at + timedelta(seconds=i * rng.randint(1, 90))).isoformat()}
        for i, step in enumerate(steps)
    ]
    return response


def _money(value: float) -> Decimal:
    return Decimal(str(value)).quantize(Decimal("0.01"), rounding=ROUND_HALF_UP)
