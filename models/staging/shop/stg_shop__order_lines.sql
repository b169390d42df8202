with

source as (
    select * from {{ source('shop', 'order_lines') }}
),

renamed as (
    select
        {{ shop_staged_columns('order_lines') }}
    from source
)

select * from renamed
