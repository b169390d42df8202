{#- The product catalogue as it is now: one row per live product. -#}
with

products as (
    select * from {{ ref('int_products_deduplicated') }}
    where not is_deleted
),

final as (
    select
        -- ids
        product_id,

        -- attributes
        product_name,
        category,

        -- amounts
        unit_price,

        -- timestamps
        updated_at
    from products
)

select * from final
