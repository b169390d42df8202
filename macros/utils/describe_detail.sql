{#- DESCRIBE DETAIL of a Delta table as a dict (format, location, numFiles, protocol, ...). -#}
{% macro describe_detail(relation) %}
  {{ return(adapter.dispatch('describe_detail', 'lakehouse')(relation)) }}
{% endmacro %}

{% macro default__describe_detail(relation) %}
  {%- set table = run_query('describe detail ' ~ relation) -%}
  {%- set detail = {} -%}
  {%- for column in table.column_names -%}
    {%- set value = table.rows[0][column] -%}
    {#- list and map columns arrive as JSON text (agate keeps only scalars) -#}
    {%- if column in ('partitionColumns', 'clusteringColumns', 'tableFeatures', 'properties') and value is string -%}
      {%- set value = fromjson(value) -%}
    {%- endif -%}
    {%- do detail.update({column: value if value is not none else ([] if column.endswith('Columns') or column == 'tableFeatures' else value)}) -%}
  {%- endfor -%}
  {{ return(detail) }}
{% endmacro %}
