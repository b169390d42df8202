{#- The current state of every customer: its newest good change, deleted customers left out. -#}
with

customer_changes as (
    select * from {{ ref('stg_shop__customers') }}
    where {{ shop_change_rejection('customers') }} is null
),

ranked as (
    select
        *,
        row_number() over (
            partition by customer_id
            order by {{ shop_change_order('customers') }} desc
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
