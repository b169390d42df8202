{#-
  dbt's get_columns_in_relation macro returns Column objects (dbt's snapshots read their `.name`);
  dbt-spark's returns the raw DESCRIBE rows instead, so with hard_deletes='new_record' a
  snapshot's deletion record found no column of the target and wrote NULLs for every column.
-#}
{% macro sparkdelta__get_columns_in_relation(relation) -%}
  {{ return(adapter.get_columns_in_relation(relation)) }}
{%- endmacro %}
