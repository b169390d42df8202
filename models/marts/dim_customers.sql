{#- Type 2 customer dimension: one row per version of a customer, from the snapshot. -#}
with

customer_versions as (
    select * from {{ ref('snap_customers') }}
),

countries as (
    select * from {{ ref('country_codes') }}
),

final as (
    select
        -- ids
        customer_versions.dbt_scd_id as customer_version_id,
        customer_versions.customer_id,

        -- attributes
        customer_versions.full_name,
        customer_versions.email,
        customer_versions.country_code,
        countries.country_name,
        countries.region,
        customer_versions.dbt_valid_to is null as is_current,

        -- timestamps
        customer_versions.created_at,
        customer_versions.updated_at,
        customer_versions.dbt_valid_from as valid_from,
        customer_versions.dbt_valid_to as valid_to
    from customer_versions
    left join countries on customer_versions.country_code = countries.country_code
)

select * from final
