-- An order's amount is the sum of its live lines; a mismatch means a merge lost or kept a line.
with

orders as (
    select * from {{ ref('fct_orders') }}
),

lines as (
    select
        order_id,
        sum(line_amount) as lines_amount
    from {{ ref('int_order_lines_deduplicated') }}
    where not is_deleted
    group by order_id
)

select
    orders.order_id,
    orders.order_amount,
    lines.lines_amount
from orders
left join lines on orders.order_id = lines.order_id
where orders.order_amount != coalesce(lines.lines_amount, 0)
