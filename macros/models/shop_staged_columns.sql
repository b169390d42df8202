{#-
  The staging of a shop bronze change: its columns renamed and cast, as a select list over a
  relation with the bronze columns. The staging views select it from the source; the
  change-driven silver models from the source's change feed (a view cannot be read by Delta
  version), so both stage a change the same way.
-#}
{% macro shop_staged_columns(source_table) -%}
    {%- if source_table == 'customers' -%}
        -- ids
        cast(customer_id as bigint) as customer_id,

        -- attributes
        full_name,
        lower(email) as email,
        upper(country_code) as country_code,

        -- timestamps
        created_at,
        updated_at,
    {%- elif source_table == 'orders' -%}
        -- ids
        cast(order_id as bigint) as order_id,
        cast(customer_id as bigint) as customer_id,

        -- attributes
        lower(status) as status,

        -- timestamps
        ordered_at,
        updated_at,
    {%- elif source_table == 'order_lines' -%}
        -- ids
        cast(order_line_id as bigint) as order_line_id,
        cast(order_id as bigint) as order_id,
        cast(product_id as bigint) as product_id,

        -- amounts
        cast(quantity as int) as quantity,
        cast(unit_price as decimal(10, 2)) as unit_price,

        -- timestamps
        updated_at,
    {%- else -%}
        {{ exceptions.raise_compiler_error(
            "shop_staged_columns: source_table must be one of customers, orders, order_lines, "
            ~ "got '" ~ source_table ~ "'.") }}
    {%- endif %}

        -- change log
        _op as change_op,
        _batch_id as batch_id,
        _loaded_at as loaded_at
{%- endmacro %}
