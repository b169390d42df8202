"""The pipeline's promise: processing change batches one by one ends in the same marts as
loading them all at once (incremental merges, deletes, quarantine and snapshot included)."""

from __future__ import annotations

import pytest

from python_tests.conftest import unique_schema
from python_tests.integration.conftest import (
    OPTIMIZED_BATCHES,
    SHOP_BATCHES,
    SHOP_THREADS,
    WITHOUT_TESTS,
    DbtProject,
)

COMPARED = {
    "fct_orders": "order_id",
    "fct_customer_revenue": "customer_id",
    "int_order_lines_deduplicated": "order_line_id",
    "int_shop_rows_quarantined": "quarantine_id",
    "int_payments_deduplicated": "payment_id",
    "fct_order_payments": "order_id",
    "fct_category_revenue": "order_date, category",
    "dim_products": "product_id",
}
# A VARIANT is compared as its JSON (Spark's VariantVal has no equality).
SELECTED = {
    "int_payments_deduplicated": "* except (provider_response), to_json(provider_response)",
}
CURRENT_CUSTOMERS = (
    "select customer_id, full_name, email, country_code, country_name "
    "from {} where is_current order by customer_id"
)


@pytest.fixture(scope="module")
def two_projects(shop, tmp_path_factory):
    """The session's shop (built batch by batch) and the same three batches built at once."""
    all_at_once = DbtProject(
        spark=shop.project.spark,
        schema=unique_schema("at_once"),
        bronze_schema=unique_schema("at_once_bronze"),
        work_dir=tmp_path_factory.mktemp("at_once"),
    )
    all_at_once.load_bronze(through=SHOP_BATCHES[-1])
    all_at_once.dbt("build", "--threads", SHOP_THREADS, *WITHOUT_TESTS)
    return shop.project, all_at_once


class TestBatchEquivalence:
    @pytest.mark.parametrize("table", sorted(COMPARED))
    def test_same_rows(self, two_projects, table):
        rows = [
            p.rows(
                f"select {SELECTED.get(table, '*')} from {p.relation(table)} "
                f"order by {COMPARED[table]}"
            )
            for p in two_projects
        ]
        assert rows[0] and rows[0] == rows[1]

    def test_same_current_customers(self, two_projects):
        rows = [p.rows(CURRENT_CUSTOMERS.format(p.relation("dim_customers"))) for p in two_projects]
        assert rows[0] and rows[0] == rows[1]

    def test_the_batches_changed_something(self, two_projects):
        one_by_one, _ = two_projects
        quarantined = one_by_one.count("int_shop_rows_quarantined")
        assert quarantined == 6, "three bad rows per change batch are quarantined"
        # a delete at the source becomes a tombstone: an update to is_deleted = true
        tombstones = one_by_one.rows(
            f"select count(*) as n from table_changes('{one_by_one.schema}."
            "int_order_lines_deduplicated', 0) where _change_type = 'update_postimage' "
            "and is_deleted"
        )[0].n
        assert tombstones > 0


SILVER_CLUSTERING = {
    "int_orders_deduplicated": "order_id",
    "int_order_lines_deduplicated": "order_line_id",
}


class TestSilverLayout:
    @pytest.mark.parametrize("table", sorted(SILVER_CLUSTERING))
    def test_clustered_by_their_key_and_optimized_only_when_asked(self, two_projects, table):
        one_by_one, all_at_once = two_projects
        for project in two_projects:
            assert list(project.detail(table).clusteringColumns) == [SILVER_CLUSTERING[table]]
        optimized = [
            [r.version for r in p.history(table) if r.operation == "OPTIMIZE"]
            for p in (one_by_one, all_at_once)
        ]
        assert len(optimized[0]) == len(OPTIMIZED_BATCHES), "one per build asked to"
        assert optimized[1] == [], "off by default"
