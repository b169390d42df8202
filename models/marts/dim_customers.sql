with

customers as (
    select * from {{ ref('int_customers_deduplicated') }}
),

countries as (
    select * from {{ ref('country_codes') }}
),

final as (
    select
        -- ids
        customers.customer_id,

        -- attributes
        customers.full_name,
        customers.email,
        customers.country_code,
        countries.country_name,
        countries.region,

        -- timestamps
        customers.created_at,
        customers.updated_at
    from customers
    left join countries on customers.country_code = countries.country_code
)

select * from final
