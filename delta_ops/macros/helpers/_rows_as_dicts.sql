{#- The rows of an agate table as dicts keyed by column name. -#}
{% macro _rows_as_dicts(table) %}
  {%- set rows = [] -%}
  {%- for row in table.rows -%}
    {%- do rows.append(dict(zip(table.column_names, row.values()))) -%}
  {%- endfor -%}
  {{ return(rows) }}
{% endmacro %}
