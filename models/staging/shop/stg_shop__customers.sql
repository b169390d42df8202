with

source as (
    select * from {{ source('shop', 'customers') }}
),

renamed as (
    select
        {{ shop_staged_columns('customers') }}
    from source
)

select * from renamed
