{#-
  One row per live order line, maintained from the change data feed of
  int_order_lines_deduplicated with the `cdf` strategy: each run applies only the changes
  committed since the last run. Tombstones (is_deleted) become deletes, and so do lines
  removed from silver (erased from bronze).
-#}
{{
    config(
        materialized='incremental',
        incremental_strategy='cdf',
        unique_key='order_line_id',
        tblproperties={
            'delta.enableChangeDataFeed': 'true',
            'delta.enableDeletionVectors': 'true',
        },
    )
}}

with

line_changes as (
    select * from {{ cdf_changes(ref('int_order_lines_deduplicated')) }}
),

final as (
    select
        -- ids
        order_line_id,
        order_id,
        product_id,

        -- amounts
        quantity,
        unit_price,
        line_amount,

        -- timestamps
        updated_at,

        -- change feed
        case
            when _change_type != 'update_preimage' and is_deleted then 'delete'
            else _change_type
        end as _change_type,
        _commit_version,
        _cdf_watermark
    from line_changes
)

select * from final
