{#-
  The current state of every order line, merged batch by batch (see int_orders_deduplicated).
  Deleted lines stay as tombstones (is_deleted) so the merge can apply them.
-#}
{{
    config(
        materialized='incremental',
        incremental_strategy='merge',
        unique_key='order_line_id',
        tblproperties={
            'delta.enableChangeDataFeed': 'true',
            'delta.enableRowTracking': 'true',
            'delta.enableDeletionVectors': 'true',
        },
    )
}}

with

line_changes as (
    select * from {{ ref('stg_shop__order_lines') }}
    {% if is_incremental() -%}
        where batch_id > (select coalesce(max(batch_id), -1) from {{ this }})
    {%- endif %}
),

ranked as (
    select
        *,
        row_number() over (
            partition by order_line_id
            order by batch_id desc, updated_at desc
        ) as change_rank
    from line_changes
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
