{#- Rows of a table (as of a version) matching a condition, counted by opening its data files:
    a bare count(*) is answered from the Delta log's statistics. -#}
{% macro _count_rows(name, where='true', as_of='') %}
  {{ return(_scalar('select count(*) from ' ~ delta_ops.relation_from_name(name) ~ as_of ~ ' where (' ~ where
      ~ ") and _metadata.file_path != ''") | int) }}
{% endmacro %}
