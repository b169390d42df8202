with

source as (
    select * from {{ source('shop', 'orders') }}
),

renamed as (
    select
        -- ids
        cast(order_id as bigint) as order_id,
        cast(customer_id as bigint) as customer_id,

        -- attributes
        lower(status) as status,

        -- timestamps
        ordered_at,
        updated_at,

        -- change log
        _op as change_op,
        _batch_id as batch_id,
        _loaded_at as loaded_at
    from source
)

select * from renamed
