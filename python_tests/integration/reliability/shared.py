"""What several reliability modules share: model text, the build they run, the tables they
compare."""

from __future__ import annotations

from python_tests.integration.conftest import DbtProject


def model_sql(config: str, sql: str) -> str:
    return f"{{{{ config({config}) }}}}\n{sql}\n"


BUILD = ("build", "--exclude", "resource_type:test", "resource_type:unit_test")
COMPARED = {
    "fct_orders": "order_id",
    "fct_customer_revenue": "customer_id",
    "fct_order_lines": "order_line_id",
    "int_orders_deduplicated": "order_id",
    "int_order_lines_deduplicated": "order_line_id",
    "int_shop_rows_quarantined": "quarantine_id",
}
BRONZE = ("customers", "orders", "order_lines", "products", "payments")


def versions(project: DbtProject, names) -> dict[str, int]:
    return {name: project.history(name)[0].version for name in names}
