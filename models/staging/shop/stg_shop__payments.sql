with

source as (
    select * from {{ source('shop', 'payments') }}
),

renamed as (
    select
        {{ shop_staged_columns('payments') }}
    from source
)

select * from renamed
