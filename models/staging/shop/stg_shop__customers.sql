with

source as (
    select * from {{ source('shop', 'customers') }}
),

renamed as (
    select
        -- ids
        cast(customer_id as bigint) as customer_id,

        -- attributes
        full_name,
        lower(email) as email,
        upper(country_code) as country_code,

        -- timestamps
        created_at,
        updated_at,

        -- change log
        _op as change_op,
        _batch_id as batch_id,
        _loaded_at as loaded_at
    from source
)

select * from renamed
