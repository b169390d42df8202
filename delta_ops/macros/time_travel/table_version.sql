{#-
  The current version of a Delta table (its latest commit), as a number; none while dbt only
  parses. `{% set v = table_version(ref('fct_orders')) %}`.
-#}
{% macro table_version(relation) %}
  {%- do delta_ops._require_sparkdelta('table_version') -%}
  {%- if not execute -%}{{ return(none) }}{%- endif -%}
  {%- if relation is string -%}{%- set relation = delta_ops.relation_from_name(relation) -%}{%- endif -%}
  {%- set result = run_query('describe history ' ~ relation ~ ' limit 1') -%}
  {{ return(result.rows[0]['version'] | int) }}
{% endmacro %}
