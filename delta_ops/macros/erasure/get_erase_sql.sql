{#- DELETE text for one relation and a subject predicate (SQL over the table's columns). -#}
{% macro get_erase_sql(relation, where) %}
  {%- if where is not string or not where.strip() or ';' in where -%}
    {{ exceptions.raise_compiler_error(
        "Invalid erase where " ~ (where | string | tojson) ~ ": give one SQL condition on the "
        ~ "subject's key, e.g. \"customer_id = 100\" (no ';').") }}
  {%- endif -%}
  {{ return('delete from ' ~ relation ~ ' where (' ~ where ~ ')') }}
{% endmacro %}
