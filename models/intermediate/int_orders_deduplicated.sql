{#-
  The current state of every order: its newest good change in bronze (see the model's YAML for
  the rules). Each run reads the bronze commits made since the version it processed last (the
  change data feed of the source, up to a version pinned when the run starts) and recomputes
  every order they touch from its current bronze rows, so an append, a correction in place and
  a delete in bronze all give what a full refresh gives; the bronze version processed is
  committed with the MERGE (`cdf` strategy).
-#}
{{
    config(
        materialized='incremental',
        incremental_strategy='cdf',
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
    from {{ cdf_touched_rows(source('shop', 'orders'), 'order_id') }}
),

final as (
    {{ shop_current_state('orders', 'bronze_rows') }}
)

select * from final
