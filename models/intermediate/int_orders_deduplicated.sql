{#-
  The current state of every order: its newest good change in bronze (see the model's YAML for
  the rules). Each run reads the bronze commits made since the version it processed last (the
  change data feed of the source, up to a version pinned when the run starts): an order with
  inserts only gets its newest good insert folded in (applied where it wins: shop_change_wins),
  without reading bronze's history; an order updated or deleted in bronze is recomputed from its
  current bronze rows. So an append, a correction in place and a delete in bronze all give what
  a full refresh gives; the bronze version processed is committed with the MERGE (`cdf`
  strategy).
-#}
{{
    config(
        materialized='incremental',
        incremental_strategy='cdf',
        matched_condition=shop_change_wins('orders'),
        unique_key='order_id',
        liquid_clustered_by=['order_id'],
        optimize_after_build=var('optimize_silver_after_build', false),
        tblproperties={
            'delta.enableChangeDataFeed': 'true',
            'delta.enableRowTracking': 'true',
            'delta.enableDeletionVectors': 'true',
        },
    )
}}

with

bronze_rows as (
    select
        {{ shop_staged_columns('orders') }},
        _change_type,
        _commit_version,
        _cdf_watermark
    from {{ cdf_touched_rows(source('shop', 'orders'), 'order_id', fold_appends=true) }}
),

final as (
    {{ shop_current_state('orders', 'bronze_rows') }}
)

select * from final
