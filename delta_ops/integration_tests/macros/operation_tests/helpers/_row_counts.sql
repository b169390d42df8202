{#- {name: rows} of several tables in one query, each counted by opening its data files (as
    _count_rows does). -#}
{% macro _row_counts(names) %}
  {%- set parts = [] -%}
  {%- for name in names -%}
    {%- do parts.append("select '" ~ name ~ "' as name, count(*) as n from " ~ delta_ops.relation_from_name(name)
        ~ " where _metadata.file_path != ''") -%}
  {%- endfor -%}
  {%- set counts = {} -%}
  {%- for row in run_query(parts | join(' union all ')).rows -%}
    {%- do counts.update({row['name']: row['n'] | int}) -%}
  {%- endfor -%}
  {{ return(counts) }}
{% endmacro %}
