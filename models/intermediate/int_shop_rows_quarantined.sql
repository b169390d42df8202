{#-
  Every change from the shop's bronze tables that cannot be loaded, with the reason and the
  whole record (rules: the shop_change_rejection macro). The silver models leave exactly these
  changes out, so a bad change is kept and explained here instead of loaded or silently dropped.
  Identical rows of one batch are one entry with their number of occurrences.
-#}
with

customers as (
    select * from {{ ref('stg_shop__customers') }}
),

orders as (
    select * from {{ ref('stg_shop__orders') }}
),

order_lines as (
    select * from {{ ref('stg_shop__order_lines') }}
),

products as (
    select * from {{ ref('stg_shop__products') }}
),

payments as (
    select * from {{ ref('stg_shop__payments') }}
),

checked_changes as (
    {% for source_table in ['customers', 'orders', 'order_lines', 'products', 'payments'] -%}
        select
            '{{ source_table }}' as source_table,
            {{ shop_entity(source_table).key }} as record_id,
            {{ shop_change_rejection(source_table) }} as rejection_reason,
            to_json(struct(*)) as record,
            batch_id,
            loaded_at
        from {{ source_table }}
        {% if not loop.last -%}
            union all
        {% endif -%}
    {%- endfor %}
),

final as (
    select
        concat_ws(
            ':',
            source_table,
            coalesce(cast(record_id as string), 'null'),
            batch_id,
            substr(sha2(record, 256), 1, 16)
        ) as quarantine_id,
        source_table,
        record_id,
        rejection_reason,
        record,
        batch_id,
        loaded_at,
        count(*) as occurrences
    from checked_changes
    where rejection_reason is not null
    group by
        source_table,
        record_id,
        rejection_reason,
        record,
        batch_id,
        loaded_at
)

select * from final
