{#-
  DESCRIBE DETAIL of a Delta table as a dict (format, location, numFiles, sizeInBytes,
  partitionColumns, clusteringColumns, tableFeatures, properties, protocol versions, ...).
  A failure raises, or with raise_on_error=false comes back as {'error': short message} (a
  maintenance operation reports it and goes on with the next table).
-#}
{% macro describe_detail(relation, raise_on_error=true) %}
  {%- if raise_on_error -%}
    {%- set table = run_query('describe detail ' ~ relation) -%}
  {%- else -%}
    {%- set result = adapter.try_execute('describe detail ' ~ relation) -%}
    {%- if result.error -%}{{ return({'error': result.error}) }}{%- endif -%}
    {%- set table = result.table -%}
  {%- endif -%}
  {%- set detail = {} -%}
  {%- for column in table.column_names -%}
    {%- set value = table.rows[0][column] -%}
    {#- list and map columns arrive as JSON text (agate keeps only scalars) -#}
    {%- if column in ('partitionColumns', 'clusteringColumns', 'tableFeatures', 'properties') -%}
      {%- set value = fromjson(value) if value is string else value -%}
      {%- set value = value if value is not none else ({} if column == 'properties' else []) -%}
    {%- endif -%}
    {%- do detail.update({column: value}) -%}
  {%- endfor -%}
  {{ return(detail) }}
{% endmacro %}
