{#-
  The current state of every product: its newest good change in bronze, appends folded in and
  every product a bronze commit rewrote recomputed from its current bronze rows, by the rules of
  int_orders_deduplicated (`cdf` strategy).
-#}
{{
    config(
        materialized='incremental',
        incremental_strategy='cdf',
        matched_condition=shop_change_wins('products'),
        unique_key='product_id',
        tblproperties={
            'delta.enableChangeDataFeed': 'true',
            'delta.enableDeletionVectors': 'true',
        },
    )
}}

with

bronze_rows as (
    select
        {{ shop_staged_columns('products') }},
        _change_type,
        _commit_version,
        _cdf_watermark
    from {{ cdf_touched_rows(source('shop', 'products'), 'product_id', fold_appends=true) }}
),

final as (
    {{ shop_current_state('products', 'bronze_rows') }}
)

select * from final
