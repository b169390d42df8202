"""Commit audit of every Delta table of this schema, read from the transaction logs."""

from lakehouse.delta.audit import commit_audit


def model(dbt, session):
    dbt.config(materialized="table", tags=["audit"])
    # The project's last tables: every table it audits is upstream of one of them, so any
    # `dbt build` runs the audit after all of them (python_tests/unit/test_project_dag.py checks
    # that a new table is not missed).
    dbt.ref("dim_customers")
    dbt.ref("fct_category_revenue")
    dbt.ref("fct_customer_revenue")
    dbt.ref("fct_daily_revenue")
    dbt.ref("fct_order_lines")
    dbt.ref("fct_order_payments")
    dbt.ref("int_order_row_lineage")
    dbt.ref("int_shop_rows_quarantined")
    return commit_audit(session, dbt.this.schema, exclude=(dbt.this.identifier,))
