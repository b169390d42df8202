{#-
  The largest value of `column` in `relation`, as a literal for the model's SQL (`default` when
  the table is empty, and while parsing). An incremental filter on a literal lets Delta's data
  skipping leave out whole files by their statistics; a scalar subquery cannot.
-#}
{% macro max_column_value(relation, column, default=-1) %}
  {%- if not execute -%}
    {{ return(default) }}
  {%- endif -%}
  {%- set quoted = safe_identifier(column, 'max_column_value column') -%}
  {%- set value = run_query('select max(' ~ quoted ~ ') from ' ~ relation).columns[0].values()[0] -%}
  {{ return(default if value is none else value) }}
{% endmacro %}
