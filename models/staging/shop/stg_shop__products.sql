with

source as (
    select * from {{ source('shop', 'products') }}
),

renamed as (
    select
        {{ shop_staged_columns('products') }}
    from source
)

select * from renamed
