{#-
  The order in which changes of one key of a shop table win, as one comparable value: a struct
  of `updated_at`, then the batch id, then a delete over an update over an insert, then the
  values (in a struct, as in `order by ... desc`, NULL is the lowest). The silver models rank a
  key's changes by it and compare a new change with the state already merged by it, so
  merging changes in any grouping gives what one full build gives. `alias`: the relation the
  columns are read from (none: unqualified).
-#}
{% macro shop_change_order(source_table, alias=none) -%}
    {%- set values = {
        'customers': ['full_name', 'email', 'country_code', 'created_at'],
        'orders': ['customer_id', 'status', 'ordered_at'],
        'order_lines': ['order_id', 'product_id', 'quantity', 'unit_price'],
    } -%}
    {%- if source_table not in values -%}
        {{ exceptions.raise_compiler_error(
            "shop_change_order: source_table must be one of " ~ values | list | join(', ')
            ~ ", got '" ~ source_table ~ "'.") }}
    {%- endif -%}
    {%- set prefix = alias ~ '.' if alias else '' -%}
    struct(
        {{ prefix }}updated_at,
        {{ prefix }}batch_id,
        case {{ prefix }}change_op when 'D' then 3 when 'U' then 2 else 1 end
        {%- for column in values[source_table] %},
        {{ prefix }}{{ column }}
        {%- endfor %}
    )
{%- endmacro %}
