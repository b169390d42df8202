{#-
  Source rows that break a business rule, with the reason. The silver models leave these rows
  out, so a bad row is kept and explained here instead of being loaded or silently dropped.
-#}
with

orders as (
    select * from {{ ref('stg_shop__orders') }}
),

order_lines as (
    select * from {{ ref('stg_shop__order_lines') }}
),

rejected_orders as (
    select
        concat_ws(':', 'orders', order_id, batch_id) as quarantine_id,
        'orders' as source_table,
        order_id as record_id,
        'customer_id is null' as rejection_reason,
        to_json(struct(*)) as record,
        batch_id,
        loaded_at
    from orders
    where customer_id is null and change_op != 'D'
),

rejected_order_lines as (
    select
        concat_ws(':', 'order_lines', order_line_id, batch_id) as quarantine_id,
        'order_lines' as source_table,
        order_line_id as record_id,
        'quantity is not positive' as rejection_reason,
        to_json(struct(*)) as record,
        batch_id,
        loaded_at
    from order_lines
    where quantity <= 0 and change_op != 'D'
),

final as (
    select * from rejected_orders
    union all
    select * from rejected_order_lines
)

select * from final
