"""The pipeline's promise: the shop processed batch by batch (the session's shop: incremental
merges, deletes, quarantine and snapshot included) holds in every silver and gold table what an
independent recompute of its bronze rows in plain Python says (python_tests/shop_reference.py),
which is what loading all the batches at once must give."""

from __future__ import annotations

import pytest

from python_tests.integration.conftest import (
    OPTIMIZED_BATCHES,
    SHOP_BATCHES,
    assert_delta_computes_the_shop_s_keys,
)
from python_tests.shop_reference import (
    COLUMNS,
    comparable,
    country_codes,
    expected_tables,
    read_bronze,
    sorted_rows,
)

CURRENT_CUSTOMERS = (
    "select customer_id, full_name, email, country_code, country_name from {} where is_current"
)


@pytest.fixture(scope="module")
def expected(shop) -> dict[str, list]:
    """The recompute of the shop's bronze, read through delta-rs (not through Spark)."""
    return expected_tables(read_bronze(shop.project.spark, shop.project.bronze_schema))


class TestBatchByBatch:
    @pytest.mark.parametrize("table", sorted(COLUMNS))
    def test_equals_the_recompute(self, shop, expected, table):
        project = shop.project
        rows = project.rows(f"select {COLUMNS[table]} from {project.relation(table)}")
        assert rows, f"{table} is empty"
        assert sorted_rows(comparable(row) for row in rows) == expected[table]

    def test_current_customers_are_the_live_ones(self, shop, expected):
        project = shop.project
        rows = project.rows(CURRENT_CUSTOMERS.format(project.relation("dim_customers")))
        names = {code: row["country_name"] for code, row in country_codes().items()}
        assert sorted_rows(tuple(row) for row in rows) == sorted_rows(
            (c[0], c[1], c[2], c[3], names.get(c[3]))
            for c in expected["int_customers_deduplicated"]
        )

    def test_the_batches_changed_something(self, shop):
        project = shop.project
        quarantined = project.count("int_shop_rows_quarantined")
        assert quarantined == 3 * (len(SHOP_BATCHES) - 1), "three bad rows per change batch"
        # a delete at the source becomes a tombstone: an update to is_deleted = true
        tombstones = project.rows(
            f"select count(*) as n from table_changes('{project.schema}."
            "int_order_lines_deduplicated', 0) where _change_type = 'update_postimage' "
            "and is_deleted"
        )[0].n
        assert tombstones > 0


def test_delta_computes_the_keys_and_a_product_keeps_its_key(shop):
    """product_sk an identity column, order_date a generated one, over two builds."""
    assert_delta_computes_the_shop_s_keys(shop.project.spark, shop.project.relation, rebuilt=True)


SILVER_CLUSTERING = {
    "int_orders_deduplicated": "order_id",
    "int_order_lines_deduplicated": "order_line_id",
}


class TestSilverLayout:
    @pytest.mark.parametrize("table", sorted(SILVER_CLUSTERING))
    def test_clustered_by_their_key_and_optimized_only_when_asked(self, shop, table):
        project = shop.project
        assert list(project.detail(table).clusteringColumns) == [SILVER_CLUSTERING[table]]
        optimized = [r.version for r in project.history(table) if r.operation == "OPTIMIZE"]
        # one per build asked to (optimize_silver_after_build); the later builds, off by default
        assert len(optimized) == len(OPTIMIZED_BATCHES) < len(SHOP_BATCHES)
