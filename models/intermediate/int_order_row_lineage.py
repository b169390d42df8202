"""Row-level lineage of the silver orders, maintained from Delta row tracking (no CDF read).

Each run picks the rows of int_orders_deduplicated whose `_metadata.row_commit_version` is
newer than the version it processed last, and updates their lineage: the stable `row_id`, the
first version seen, the last version changed and the number of changes seen.
Logic in lakehouse.shop.transforms; the row-tracking read is the adapter's ChangeFeed.
"""

from dbt.adapters.sparkdelta.change_feed import ChangeFeed
from lakehouse.shop.transforms import row_lineage_changes


def model(dbt, session):
    dbt.config(
        materialized="incremental",
        incremental_strategy="cdf",
        unique_key="row_id",
        tblproperties={
            "delta.enableChangeDataFeed": "true",
            "delta.enableDeletionVectors": "true",
        },
    )
    dbt.ref("int_orders_deduplicated")  # declares the dependency; read below by name
    target = f"{dbt.this.schema}.{dbt.this.identifier}" if dbt.is_incremental else None
    feed = ChangeFeed(session, model="int_order_row_lineage", target=target)
    return row_lineage_changes(
        feed,
        table=dbt.ref_relation("int_orders_deduplicated"),
        key="order_id",
        previous=session.table(target) if target else None,
    )
