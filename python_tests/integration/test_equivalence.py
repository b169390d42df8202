"""Incremental equals full refresh under any change sequence (property-style, seeded).

Random adversarial batches (python_tests/shop_reference.py) land in bronze, and after each one
another writer rewrites bronze once (plain Delta SQL, in turn: an update in place, a delete, a
MERGE of updates and inserts, a RESTORE to an earlier version); the silver and gold models are
built incrementally with random pauses (several batches between builds). After each
build every compared table must equal an independent recompute in plain Python over the bronze
rows read through delta-rs, and the quarantine must account for every bad row: per batch and
table, the bronze rows are the good ones plus the quarantined occurrences. After the last build
the tables must also equal a `--full-refresh` build of the same models over the same bronze
(built once: a full refresh reads only bronze, so the recompute after every build already
checks each intermediate state).

A failure names its seed; replay it with LAKEHOUSE_EQUIVALENCE_SEEDS=<seed> (comma-separated).
"""

from __future__ import annotations

import os
import random
from collections import Counter

import pytest

from python_tests.conftest import RELIABILITY, unique_schema
from python_tests.integration.conftest import SHOP_THREADS, DbtProject
from python_tests.shop_reference import (
    COLUMNS,
    KEYS,
    AdversarialBatches,
    comparable,
    expected_tables,
    read_bronze,
    rejection,
    sorted_rows,
)

pytestmark = pytest.mark.sequence  # make test-sequences


def build_of(models, seeds: bool = True) -> tuple[str, ...]:
    """`dbt build` of `models` and everything upstream of them, without tests, with the
    threads of a production build; `seeds=False` leaves the seeds out (a sequence never
    changes them: a project's first build loads them, the next ones need not)."""
    selected = (f"+{model}" for model in models)
    left_out = ["resource_type:test", "resource_type:unit_test"]
    if not seeds:
        left_out.append("resource_type:seed")
    return ("build", "--threads", SHOP_THREADS, "--select", *selected, "--exclude", *left_out)


BUILD, REBUILD = build_of(COLUMNS), build_of(COLUMNS, seeds=False)
# Another writer's commits that rewrite bronze rows (one after each batch but the first, in
# this order); REWRITTEN_VALUES changes values and keeps updated_at, so that only the models'
# recompute of the touched keys can see it: a line or a payment moves to another order.
REWRITES = ("update", "delete", "merge", "restore")
REWRITTEN_VALUES = {
    "customers": "country_code = 'US', email = upper({t}email)",
    "orders": "status = 'cancelled'",
    "order_lines": "order_id = {t}order_id % 8 + 1",
    "products": "category = 'moved'",
    "payments": "order_id = {t}order_id % 8 + 1, amount = -{t}amount",
}


def seeds(default: list[int]) -> list[int]:
    replay = os.environ.get("LAKEHOUSE_EQUIVALENCE_SEEDS")
    return [int(s) for s in replay.split(",")] if replay else default


class Sequence:
    """One seed: an incrementally built project and a fully refreshed one over one bronze."""

    compared = tuple(COLUMNS)  # the tables checked against the recompute (and BUILD builds)

    def __init__(self, spark, tmp_path_factory, seed: int, batches: int):
        self.spark, self.seed, self.batches = spark, seed, batches
        self.generator = AdversarialBatches(seed)
        bronze = unique_schema(f"eq{seed}_bronze")

        def project(kind: str) -> DbtProject:
            return DbtProject(
                spark=spark, schema=unique_schema(f"eq{seed}_{kind}"), bronze_schema=bronze,
                work_dir=tmp_path_factory.mktemp(f"eq{seed}_{kind}"),
            )  # fmt: skip

        self.incremental, self.full_refresh = project("incremental"), project("full")
        self.rewritten: set[int] = set()

    def build_points(self) -> list[int]:
        """The batches after which to build: random pauses, always the last one."""
        rng = random.Random(f"pauses:{self.seed}")
        last = self.batches - 1
        return [b for b in range(self.batches) if b == last or rng.random() < 0.5]

    def load(self, through: int) -> None:
        from lakehouse.shop.bronze import load_batches

        loaded = load_batches(self.spark, self.generator, self.incremental.bronze_schema, through)
        for batch in sorted(loaded):
            # once per batch: a RESTORE can take a batch out, and the next load re-append it
            if batch > 0 and loaded[batch] and batch not in self.rewritten:
                self.rewrite(after_batch=batch)
                self.rewritten.add(batch)

    def rewrite(self, after_batch: int) -> None:
        """One commit of another writer on a bronze table (seeded): the rows of one key
        updated in place, or deleted (an erasure); a MERGE that updates them and inserts
        copies under keys no other batch uses; or the table restored to an earlier version."""
        from lakehouse.shop.generator import bronze_columns

        rng = random.Random(f"rewrite:{self.seed}:{after_batch}")
        kind = REWRITES[(after_batch - 1) % len(REWRITES)]
        first = rng.choice(list(KEYS))
        for table in (first, *(t for t in KEYS if t != first)):  # a RESTORE can empty one
            key, name = KEYS[table], f"`{self.incremental.bronze_schema}`.`{table}`"
            held = self.spark.sql(f"select distinct {key} from {name} where {key} is not null")
            keys = sorted(row[0] for row in held.collect())
            if keys:
                break
        chosen = rng.choice(keys)  # a key bronze holds
        if kind == "update":
            values = REWRITTEN_VALUES[table].format(t="")
            statement = f"update {name} set {values} where {key} = {chosen}"
        elif kind == "delete":
            statement = f"delete from {name} where {key} = {chosen}"
        elif kind == "merge":
            others = [column for column, _ in bronze_columns(table) if column != key]
            copies = f"{key} + {100 * after_batch} as {key}, {', '.join(others)}"
            statement = (
                f"merge into {name} as t using ("
                f"select {chosen} as {key}, {', '.join(f'null as {c}' for c in others)} "
                f"union all select {copies} from {name} where {key} = {chosen}) as s "
                f"on t.{key} = s.{key} "
                f"when matched then update set {REWRITTEN_VALUES[table].format(t='t.')} "
                "when not matched then insert *"
            )
        else:
            current = self.spark.sql(f"describe history {name} limit 1").first().version
            statement = f"restore table {name} to version as of {rng.randrange(current)}"
        self.spark.sql(statement)
        RELIABILITY[f"equivalence bronze rewrites: {kind}"] += 1

    def bronze_rows(self) -> dict[str, list[dict]]:
        """The bronze rows as delta-rs reads them (not through Spark)."""
        return read_bronze(self.spark, self.incremental.bronze_schema)

    def table(self, project: DbtProject, name: str) -> list[tuple]:
        rows = project.rows(f"select {COLUMNS[name]} from {project.relation(name)}")
        return sorted_rows(comparable(row) for row in rows)

    def check(self, after_batch: int, full_refresh: bool) -> None:
        """The incremental tables equal the independent recompute and (`full_refresh`) the
        full-refresh project's, built over the same bronze."""
        where = f"seed {self.seed}, after batch {after_batch}"
        bronze = self.bronze_rows()
        expected = expected_tables(bronze)
        for name in self.compared:
            incremental = self.table(self.incremental, name)
            if full_refresh:
                full = self.table(self.full_refresh, name)
                assert incremental == full, f"{where}: {name} incremental != full refresh\n" + (
                    diff(incremental, full)
                )
            assert incremental == expected[name], f"{where}: {name} != recompute\n" + diff(
                incremental, expected[name]
            )
            RELIABILITY["equivalence rows checked"] += len(incremental)
        # Every bronze row is either good or counted in the quarantine, per table and batch.
        quarantined = Counter()
        for source_table, _, _, batch_id, occurrences in self.table(
            self.incremental, "int_shop_rows_quarantined"
        ):
            quarantined[(source_table, batch_id)] += occurrences
        for table, rows in bronze.items():
            landed = Counter((table, r["_batch_id"]) for r in rows)
            good = Counter((table, r["_batch_id"]) for r in rows if rejection(table, r) is None)
            for key, n in landed.items():
                assert n == good[key] + quarantined[key], f"{where}: {key} rows in != out"


def diff(got: list[tuple], expected: list[tuple]) -> str:
    missing = [r for r in expected if r not in got][:5]
    extra = [r for r in got if r not in expected][:5]
    return f"  missing: {missing}\n  extra: {extra}"


def run_sequence(delta_spark, tmp_path_factory, seed: int, batches: int) -> None:
    sequence = Sequence(delta_spark, tmp_path_factory, seed, batches)
    points = sequence.build_points()
    for batch in points:
        sequence.load(through=batch)
        sequence.incremental.dbt(*(BUILD if batch == points[0] else REBUILD))
        last = batch == points[-1]
        if last:
            sequence.full_refresh.dbt(*BUILD, "--full-refresh")
        sequence.check(after_batch=batch, full_refresh=last)
        RELIABILITY["equivalence builds"] += 1


@pytest.mark.parametrize("seed", seeds([20261124]))
def test_incremental_equals_full_refresh_and_recompute(delta_spark, tmp_path_factory, seed):
    run_sequence(delta_spark, tmp_path_factory, seed, batches=5)


@pytest.mark.slow
@pytest.mark.parametrize("seed", seeds([1, 2, 8]))
def test_incremental_equals_full_refresh_and_recompute_long(delta_spark, tmp_path_factory, seed):
    run_sequence(delta_spark, tmp_path_factory, seed, batches=12)
