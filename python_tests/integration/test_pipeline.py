"""The pipeline's promise: processing change batches one by one ends in the same marts as
loading them all at once (incremental merges, deletes, quarantine and snapshot included)."""

from __future__ import annotations

import pytest

from python_tests.conftest import unique_schema
from python_tests.integration.conftest import DbtProject

BUILD = ("build", "--exclude", "resource_type:test", "resource_type:unit_test")
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


@pytest.fixture(scope="module")  # built once for both classes
def two_projects(delta_spark, tmp_path_factory):
    def project(prefix: str) -> DbtProject:
        return DbtProject(
            spark=delta_spark,
            schema=unique_schema(prefix),
            bronze_schema=unique_schema(f"{prefix}_bronze"),
            work_dir=tmp_path_factory.mktemp(prefix),
        )

    one_by_one, all_at_once = project("batchwise"), project("at_once")
    for batch in (0, 1, 2):
        one_by_one.load_bronze(through=batch)
        # batch by batch the silver tables are also OPTIMIZEd (clustered) after each build
        one_by_one.dbt(*BUILD, "--vars", "{optimize_silver_after_build: true}")
    all_at_once.load_bronze(through=2)
    all_at_once.dbt(*BUILD)
    return one_by_one, all_at_once


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
        assert len(optimized[0]) == 3, "optimize_silver_after_build: one OPTIMIZE per build"
        assert optimized[1] == [], "off by default"
