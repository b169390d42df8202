{#-
  The current state of every product: its newest good change in bronze, every product a bronze
  commit since the version processed last touches recomputed from its current bronze rows, by
  the rules of int_orders_deduplicated (`cdf` strategy).
-#}
{{
    config(
        materialized='incremental',
        incremental_strategy='cdf',
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
    from {{ cdf_touched_rows(source('shop', 'products'), 'product_id') }}
),

final as (
    {{ shop_current_state('products', 'bronze_rows') }}
)

select * from final
