{#-
  Why a change from one of the shop's bronze tables cannot be loaded: a SQL expression over the
  staged change's columns that is null for a good change and the reason for a bad one. The
  silver models keep the changes where it is null; int_shop_rows_quarantined keeps the others.
-#}
{% macro shop_change_rejection(source_table) -%}
    {%- set keys = {
        'customers': 'customer_id',
        'orders': 'order_id',
        'order_lines': 'order_line_id',
    } -%}
    {%- if source_table not in keys -%}
        {{ exceptions.raise_compiler_error(
            "shop_change_rejection: source_table must be one of " ~ keys | list | join(', ')
            ~ ", got '" ~ source_table ~ "'.") }}
    {%- endif -%}
    {#- one line, so the expression sits anywhere in a select or a where -#}
    {%- set rules = [
        ("change_op is null or change_op not in ('I', 'U', 'D')", 'change_op is not I, U or D'),
        (keys[source_table] ~ ' is null', keys[source_table] ~ ' is null'),
        ('updated_at is null', 'updated_at is null'),
    ] -%}
    {%- if source_table == 'orders' -%}
        {%- do rules.append(("change_op != 'D' and customer_id is null", 'customer_id is null')) -%}
        {#- an order without status or date cannot be counted honestly in revenue by date -#}
        {%- do rules.append(("change_op != 'D' and status is null", 'status is null')) -%}
        {%- do rules.append(("change_op != 'D' and ordered_at is null", 'ordered_at is null')) -%}
    {%- elif source_table == 'order_lines' -%}
        {%- do rules.append(("change_op != 'D' and (quantity is null or quantity <= 0)",
            'quantity is not positive')) -%}
    {%- endif -%}
    case{% for condition, reason in rules %} when {{ condition }} then '{{ reason }}'{% endfor %} end
{%- endmacro %}
