{#-
  The current state of every order line: its newest good change, merged batch by batch, deletes
  kept as tombstones (see int_orders_deduplicated and the model's YAML).
-#}
{{
    config(
        materialized='incremental',
        incremental_strategy='merge',
        unique_key='order_line_id',
        matched_condition=newer_change_condition(),
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

line_changes as (
    select staged.* from {{ ref('stg_shop__order_lines') }} as staged
    {% if is_incremental() -%}
        {#- a literal: Delta skips the bronze files of the batches already merged -#}
        where staged.batch_id > {{ max_column_value(this, 'batch_id', -1) }}
    {%- endif %}
),

good_changes as (
    select * from line_changes
    where {{ shop_change_rejection('order_lines') }} is null
),

ranked as (
    select
        *,
        row_number() over (
            partition by order_line_id
            order by
                updated_at desc,
                batch_id desc,
                case change_op when 'D' then 3 when 'U' then 2 else 1 end desc,
                order_id desc,
                product_id desc,
                quantity desc,
                unit_price desc
        ) as change_rank
    from good_changes
),

final as (
    select
        order_line_id,
        order_id,
        product_id,
        quantity,
        unit_price,
        quantity * unit_price as line_amount,
        updated_at,
        change_op = 'D' as is_deleted,
        batch_id
    from ranked
    where change_rank = 1
)

select * from final
