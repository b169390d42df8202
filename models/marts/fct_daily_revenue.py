"""Revenue per order date, maintained from the change data feed of the silver tables.

Each run reads only the order and order line changes committed since the last run, and for
the orders they touch subtracts their old contribution (their rows as of the versions last
processed, rebuilt from the change feed's pre-images) and adds their new one, per date,
reading only those orders' rows; the `cdf` strategy merges the new totals with the watermark
in one commit.
Logic in lakehouse.shop.transforms; the change feed is the adapter's ChangeFeed.
"""

from dbt.adapters.sparkdelta.change_feed import ChangeFeed
from lakehouse.shop.transforms import daily_revenue_from_feed


def model(dbt, session):
    dbt.config(
        materialized="incremental",
        incremental_strategy="cdf",
        unique_key="order_date",
        cdf_on_gap="error",
        tblproperties={
            "delta.enableChangeDataFeed": "true",
            "delta.enableDeletionVectors": "true",
            "lakehouse.layer": "gold",
        },
    )
    # dbt.ref declares the dependencies; ChangeFeed reads the tables' change feeds by name.
    dbt.ref("int_order_lines_deduplicated")
    dbt.ref("int_orders_deduplicated")
    feed = ChangeFeed(
        session,
        model="fct_daily_revenue",
        target=f"{dbt.this.schema}.{dbt.this.identifier}" if dbt.is_incremental else None,
        on_gap=dbt.config.get("cdf_on_gap"),
    )
    return daily_revenue_from_feed(
        feed,
        lines_table=dbt.ref_relation("int_order_lines_deduplicated"),
        orders_table=dbt.ref_relation("int_orders_deduplicated"),
    )
