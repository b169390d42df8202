{#-
  An existing seed table, its values checked first. A Delta seed (the default) is replaced in
  place in one commit by create_csv_table. Another file format keeps dbt-spark's drop and
  create.
-#}
{% macro sparkdelta__reset_csv_table(model, full_refresh, old_relation, agate_table) %}
  {%- if old_relation.is_delta and config.get('file_format') == 'delta' -%}
    {{ return(create_csv_table(model, agate_table)) }}
  {%- endif -%}
  {%- do sparkdelta__check_csv_values(model, agate_table) -%}
  {{ return(spark__reset_csv_table(model, full_refresh, old_relation, agate_table)) }}
{% endmacro %}
