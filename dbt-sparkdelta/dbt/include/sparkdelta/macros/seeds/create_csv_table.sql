{#- A new seed table: its values checked first (check_csv_values), then dbt-spark's DDL. -#}
{% macro sparkdelta__create_csv_table(model, agate_table) %}
  {%- do sparkdelta__check_csv_values(model, agate_table) -%}
  {{ return(spark__create_csv_table(model, agate_table)) }}
{% endmacro %}
