{#-
  The product catalogue as it is now: one row per live product, with a surrogate key that Delta
  numbers (an identity column). Incremental, so a product keeps its product_sk from run to run:
  the MERGE updates changed products, numbers new ones and deletes those no longer live. A
  --full-refresh renumbers them.
-#}
{{
    config(
        materialized='incremental',
        incremental_strategy='merge',
        unique_key='product_id',
        not_matched_by_source_action='delete',
        identity_columns={'product_sk': {'always': true}},
    )
}}
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
