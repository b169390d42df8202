{#- The current state of every customer: the latest change per customer, deletes removed. -#}
with

customer_changes as (
    select * from {{ ref('stg_shop__customers') }}
),

ranked as (
    select
        *,
        row_number() over (
            partition by customer_id
            order by batch_id desc, updated_at desc
        ) as change_rank
    from customer_changes
),

final as (
    select
        customer_id,
        full_name,
        email,
        country_code,
        created_at,
        updated_at,
        batch_id
    from ranked
    where change_rank = 1 and change_op != 'D'
)

select * from final
