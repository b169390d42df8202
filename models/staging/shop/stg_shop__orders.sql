with

source as (
    select * from {{ source('shop', 'orders') }}
),

renamed as (
    select
        {{ shop_staged_columns('orders') }}
    from source
)

select * from renamed
