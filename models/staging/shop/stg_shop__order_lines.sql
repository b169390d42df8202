with

source as (
    select * from {{ source('shop', 'order_lines') }}
),

renamed as (
    select
        -- ids
        cast(order_line_id as bigint) as order_line_id,
        cast(order_id as bigint) as order_id,
        cast(product_id as bigint) as product_id,

        -- amounts
        cast(quantity as int) as quantity,
        cast(unit_price as decimal(10, 2)) as unit_price,

        -- timestamps
        updated_at,

        -- change log
        _op as change_op,
        _batch_id as batch_id,
        _loaded_at as loaded_at
    from source
)

select * from renamed
