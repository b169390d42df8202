{#-
  The current state of every order line: its newest good change in bronze, appends folded in
  and every line a bronze commit rewrote recomputed from its current bronze rows (see
  int_orders_deduplicated and the model's YAML).
-#}
{{
    config(
        materialized='incremental',
        incremental_strategy='cdf',
        matched_condition=shop_change_wins('order_lines'),
        unique_key='order_line_id',
        liquid_clustered_by=['order_line_id'],
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
        {{ shop_staged_columns('order_lines') }},
        _change_type,
        _commit_version,
        _cdf_watermark
    from {{ cdf_touched_rows(source('shop', 'order_lines'), 'order_line_id', fold_appends=true) }}
),

current_lines as (
    {{ shop_current_state('order_lines', 'bronze_rows') }}
),

final as (
    select
        *,
        quantity * unit_price as line_amount
    from current_lines
)

select * from final
