"""Incremental equals full refresh under any change sequence (property-style, seeded).

Random adversarial batches (python_tests/shop_reference.py) land in bronze; the silver and gold
models are built incrementally with random pauses (several batches between builds). After each
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
from deltalake import DeltaTable

from python_tests.conftest import RELIABILITY, unique_schema
from python_tests.integration.conftest import DbtProject
from python_tests.shop_reference import (
    COLUMNS,
    KEYS,
    AdversarialBatches,
    expected_tables,
    order_statuses,
    rejection,
    sorted_rows,
    utc,
)

pytestmark = pytest.mark.sequence  # make test-sequences

SELECT = ("--select", *(f"+{model}" for model in COLUMNS))
BUILD = ("build", *SELECT, "--exclude", "resource_type:test", "resource_type:unit_test")


def seeds(default: list[int]) -> list[int]:
    replay = os.environ.get("LAKEHOUSE_EQUIVALENCE_SEEDS")
    return [int(s) for s in replay.split(",")] if replay else default


class Sequence:
    """One seed: an incrementally built project and a fully refreshed one over one bronze."""

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

    def build_points(self) -> list[int]:
        """The batches after which to build: random pauses, always the last one."""
        rng = random.Random(f"pauses:{self.seed}")
        last = self.batches - 1
        return [b for b in range(self.batches) if b == last or rng.random() < 0.5]

    def load(self, through: int) -> None:
        from lakehouse.shop.bronze import load_batches

        load_batches(self.spark, self.generator, self.incremental.bronze_schema, through)

    def bronze_rows(self) -> dict[str, list[dict]]:
        """The bronze rows as delta-rs reads them (not through Spark)."""
        rows = {}
        for table in KEYS:
            location = self.incremental.rows(
                f"describe detail `{self.incremental.bronze_schema}`.`{table}`"
            )[0].location
            rows[table] = DeltaTable(location.removeprefix("file:")).to_pyarrow_table().to_pylist()
        return rows

    def table(self, project: DbtProject, name: str) -> list[tuple]:
        rows = project.rows(f"select {COLUMNS[name]} from {project.relation(name)}")
        return sorted_rows(tuple(utc(v) for v in row) for row in rows)

    def check(self, after_batch: int, full_refresh: bool) -> None:
        """The incremental tables equal the independent recompute and (`full_refresh`) the
        full-refresh project's, built over the same bronze."""
        where = f"seed {self.seed}, after batch {after_batch}"
        bronze = self.bronze_rows()
        expected = expected_tables(bronze, order_statuses())
        for name in COLUMNS:
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
        sequence.incremental.dbt(*BUILD)
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
