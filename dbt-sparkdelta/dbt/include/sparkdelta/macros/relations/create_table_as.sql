{#-
  The `sparkdelta` adapter's create_table_as: Delta tables get the adapter's Delta DDL (features,
  properties, constraints and layout in the first commit); everything else is dbt-spark's.
-#}
{% macro sparkdelta__create_table_as(temporary, relation, compiled_code, language='sql') -%}
  {%- if language == 'sql' and not temporary and config.get('file_format', 'delta') == 'delta' -%}
    {{ get_create_delta_table_as_sql(relation, compiled_code) }}
  {%- else -%}
    {{ spark__create_table_as(temporary, relation, compiled_code, language) }}
  {%- endif -%}
{%- endmacro %}
