{#-
  Revenue per order date and product category: the live lines of orders not cancelled, with
  the category each product has now (dim_products).
-#}
with

order_lines as (
    select * from {{ ref('fct_order_lines') }}
),

orders as (
    select * from {{ ref('fct_orders') }}
    where status != 'cancelled'
),

products as (
    select * from {{ ref('dim_products') }}
),

final as (
    select
        orders.order_date,
        coalesce(products.category, 'unknown') as category,
        count(distinct orders.order_id) as order_count,
        sum(order_lines.quantity) as item_count,
        cast(sum(order_lines.line_amount) as decimal(38, 2)) as revenue
    from order_lines
    inner join orders on order_lines.order_id = orders.order_id
    left join products on order_lines.product_id = products.product_id
    group by
        orders.order_date,
        coalesce(products.category, 'unknown')
)

select * from final
