{#-
  Every live order reconciled against its payments: what it owes (its amount when its status
  is a paid one, otherwise nothing: a placed order is not due yet, a cancelled one is
  refunded), what its charges and refunds net to, and the state that follows. An order paid
  twice is 'overpaid', a paid order without a payment 'unpaid'; the model's test accepts only
  the states of a reconciled shop.
-#}
with

orders as (
    select * from {{ ref('fct_orders') }}
),

order_statuses as (
    select * from {{ ref('order_statuses') }}
),

payments as (
    select * from {{ ref('fct_payments') }}
),

order_payments as (
    select
        order_id,
        count(*) as payment_count,
        cast(sum(case when amount > 0 then amount else 0 end) as decimal(38, 2))
            as amount_charged,
        cast(sum(case when amount < 0 then -amount else 0 end) as decimal(38, 2))
            as amount_refunded,
        cast(sum(amount) as decimal(38, 2)) as amount_paid
    from payments
    group by order_id
),

reconciled as (
    select
        orders.order_id,
        orders.status,
        orders.order_amount,
        case when order_statuses.is_paid then orders.order_amount else 0 end as amount_due,
        coalesce(order_payments.payment_count, 0) as payment_count,
        coalesce(order_payments.amount_charged, 0) as amount_charged,
        coalesce(order_payments.amount_refunded, 0) as amount_refunded,
        coalesce(order_payments.amount_paid, 0) as amount_paid
    from orders
    left join order_statuses on orders.status = order_statuses.status
    left join order_payments on orders.order_id = order_payments.order_id
),

final as (
    select
        -- ids
        order_id,

        -- attributes
        status,
        case
            when amount_paid = amount_due and amount_due > 0 then 'settled'
            when amount_paid = amount_due and amount_charged > 0 then 'refunded'
            when amount_paid = amount_due then 'not due'
            when amount_paid = 0 then 'unpaid'
            when amount_paid > amount_due then 'overpaid'
            else 'underpaid'
        end as payment_state,

        -- amounts
        order_amount,
        amount_due,
        amount_charged,
        amount_refunded,
        amount_paid,
        amount_due - amount_paid as balance_due,
        payment_count
    from reconciled
)

select * from final
