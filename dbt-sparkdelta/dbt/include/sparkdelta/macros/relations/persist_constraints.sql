{#-
  Called by dbt-spark's table materialization right after the table is created: this adapter's
  hook for what follows a table build. Constraints are part of the Delta DDL (see
  get_delta_table_properties) and reconciled on incremental runs, so dbt-spark's ALTER ... ADD
  CONSTRAINT is not wanted; column defaults are set here, then optimize_after_build runs.
-#}
{% macro sparkdelta__persist_constraints(relation, model) %}
  {%- if config.get('file_format', 'delta') == 'delta' -%}
    {%- do apply_column_defaults(relation, created=true) -%}
    {%- do optimize_after_build(relation) -%}
  {%- endif -%}
{% endmacro %}
