"""Revenue per customer, computed in PySpark (logic in lakehouse.shop.transforms)."""

from lakehouse.shop.transforms import customer_revenue


def model(dbt, session):
    dbt.config(
        materialized="table",
        tblproperties={
            "delta.enableChangeDataFeed": "true",
            "lakehouse.layer": "gold",
        },
    )
    return customer_revenue(dbt.ref("fct_orders"))
