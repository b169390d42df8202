{#-
  Constraints are part of the Delta DDL (see get_delta_table_properties) and reconciled on
  incremental runs, so dbt-spark's ALTER after the data is written is not wanted.
-#}
{% macro sparkdelta__persist_constraints(relation, model) %}
{% endmacro %}
