"""The adversarial batches of the equivalence test make every documented case happen."""

from __future__ import annotations

from collections import defaultdict

from python_tests.shop_reference import (
    KEYS,
    MAX_PRICE,
    MAX_QUANTITY,
    AdversarialBatches,
    rejection,
)

# The seeds and sizes of the equivalence tests: the one of `make test`, and the long ones.
SEQUENCES = [(20261124, 5), (1, 12), (2, 12), (8, 12)]


def content(tables: dict[str, list[dict]]) -> dict:
    """A batch's changes without the batch id and landing time."""
    ignored = ("_batch_id", "_loaded_at")
    return {
        t: [{k: v for k, v in r.items() if k not in ignored} for r in rows]
        for t, rows in tables.items()
    }


def cases_of(seed: int, batches: int) -> set[str]:
    generator = AdversarialBatches(seed)
    found: set[str] = set()
    seen: dict[tuple, list[dict]] = defaultdict(list)  # (table, key) -> earlier changes
    labels: list = []  # the batch ids written in earlier batches
    for batch_id, tables in generator.batches(batches - 1):
        changes = [(t, r) for t, rows in tables.items() for r in rows]
        written = {r["_batch_id"] for _, r in changes}
        if None in written:
            found.add("a NULL batch id")
        if any(b is not None and b in labels for b in written):
            found.add("a batch id written before")
        if any(b is not None and any(b < a for a in labels if a is not None) for b in written):
            found.add("a batch id lower than an earlier one")
        labels.extend(written)
        if batch_id and changes and all(r["_op"] == "D" for _, r in changes):
            found.add("a batch that only deletes")
        if batch_id and any(
            content(tables) == content(earlier) for _, earlier in generator.batches(batch_id - 1)
        ):
            found.add("a re-sent batch")
        in_batch: dict[tuple, list[dict]] = defaultdict(list)
        for table, row in changes:
            key = row[KEYS[table]]
            bad = rejection(table, row)
            if key is None:
                found.add("NULL key")
            if row["updated_at"] is None:
                found.add("NULL updated_at")
            if table == "orders" and row["_op"] != "D":
                found |= {f"NULL {c}" for c in ("status", "ordered_at") if row[c] is None}
            if table == "order_lines" and row["quantity"] == MAX_QUANTITY:
                found.add("the largest quantity")
            if table in ("order_lines", "products") and str(row["unit_price"]) == MAX_PRICE:
                found.add(f"the largest price of {table}")
            if table == "payments" and not bad and row["_op"] != "D" and row["amount"] < 0:
                found.add("a refund")
            if bad in (
                "provider_response is missing or not JSON",
                "unit_price is missing or negative",
            ):
                found.add(bad)
            parent = {"orders": "customer_id", "order_lines": "order_id", "payments": "order_id"}
            parent = parent.get(table)
            if (
                parent
                and not bad
                and any(
                    r[parent] != row[parent]
                    for r in seen[(table, key)]
                    if rejection(table, r) is None
                )
            ):
                found.add("a key moving to another parent")
            earlier = seen[(table, key)]
            good_earlier = [r for r in earlier if rejection(table, r) is None]
            if bad and good_earlier:
                found.add("a bad change of a key with a good state")
            if not bad:
                if any(r["updated_at"] > row["updated_at"] for r in good_earlier):
                    found.add("a late change older than the merged state")
                if row["_op"] == "D" and not good_earlier:
                    found.add("a delete of a key never seen")
                if row["_op"] == "I" and any(r["_op"] == "D" for r in good_earlier):
                    found.add("a re-insert after a delete in an earlier batch")
                if row["_op"] != "I" and earlier and not good_earlier:
                    found.add("a change of a key whose insert was quarantined")
                for other in in_batch[(table, key)]:
                    if rejection(table, other) is None:
                        if other["updated_at"] == row["updated_at"]:
                            found.add("a tie on updated_at in one batch")
                        if other["_op"] == "D" and row["_op"] == "I":
                            found.add("a delete then a re-insert in one batch")
            in_batch[(table, key)].append(row)
        for key, rows in in_batch.items():
            seen[key].extend(rows)
    return found


def test_the_sequences_cover_every_documented_case():
    covered = set().union(*(cases_of(seed, n) for seed, n in SEQUENCES))
    assert covered == {
        "a NULL batch id",
        "a batch id written before",
        "a batch id lower than an earlier one",
        "NULL status",
        "NULL ordered_at",
        "the largest quantity",
        "the largest price of order_lines",
        "the largest price of products",
        "a refund",
        "provider_response is missing or not JSON",
        "unit_price is missing or negative",
        "a key moving to another parent",
        "a batch that only deletes",
        "a re-sent batch",
        "NULL key",
        "NULL updated_at",
        "a bad change of a key with a good state",
        "a late change older than the merged state",
        "a delete of a key never seen",
        "a re-insert after a delete in an earlier batch",
        "a change of a key whose insert was quarantined",
        "a tie on updated_at in one batch",
        "a delete then a re-insert in one batch",
    }


def test_the_short_sequence_of_make_test_covers_most_cases():
    assert len(cases_of(*SEQUENCES[0])) >= 8
