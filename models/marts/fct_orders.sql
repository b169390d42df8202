{#-
  One row per live order. order_date is a generated column: Delta computes it from ordered_at
  on every write (any writer's), so it cannot disagree with ordered_at.
-#}
{{
    config(
        generated_columns={
            'order_date': {'expression': 'cast(ordered_at as date)', 'data_type': 'date'},
        },
    )
}}

with

orders as (
    select * from {{ ref('int_orders_deduplicated') }}
    where not is_deleted
),

order_lines as (
    select * from {{ ref('int_order_lines_deduplicated') }}
    where not is_deleted
),

order_statuses as (
    select * from {{ ref('order_statuses') }}
),

customers as (
    select * from {{ ref('int_customers_deduplicated') }}
),

countries as (
    select * from {{ ref('country_codes') }}
),

order_totals as (
    select
        order_id,
        count(*) as line_count,
        sum(quantity) as item_count,
        -- Spark's widest decimal: the sum of any number of lines stays exact
        cast(sum(line_amount) as decimal(38, 2)) as order_amount
    from order_lines
    group by order_id
),

final as (
    select
        -- ids
        orders.order_id,
        orders.customer_id,

        -- attributes
        orders.status,
        order_statuses.status_name,
        order_statuses.is_final as is_status_final,

        -- amounts
        coalesce(order_totals.line_count, 0) as line_count,
        coalesce(order_totals.item_count, 0) as item_count,
        coalesce(order_totals.order_amount, 0) as order_amount,

        -- timestamps
        orders.ordered_at,
        -- the customer's wall-clock time, a TIMESTAMP_NTZ: the same value in any session zone
        convert_timezone(
            countries.time_zone, cast(orders.ordered_at as timestamp_ntz)
        ) as ordered_at_local,
        orders.updated_at
    from orders
    left join order_totals on orders.order_id = order_totals.order_id
    left join order_statuses on orders.status = order_statuses.status
    left join customers on orders.customer_id = customers.customer_id
    left join countries on customers.country_code = countries.country_code
)

select * from final
