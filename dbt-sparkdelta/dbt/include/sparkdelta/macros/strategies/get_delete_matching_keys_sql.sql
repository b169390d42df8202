{#- delete+insert, step one: an atomic MERGE that deletes the target rows whose key the new
    data carries (null-safe, like the merge strategy), and that match the model's
    `incremental_predicates` when it has some. The source's keys get names of their own, so an
    unqualified column in a predicate is the target's (as in dbt's DELETE ... WHERE). -#}
{% macro get_delete_matching_keys_sql(source, target, unique_key, predicates=none) -%}
  {%- if not unique_key -%}
    {{ exceptions.raise_compiler_error(
        "Model " ~ model.unique_id ~ ": incremental_strategy 'delete+insert' needs a `unique_key`.") }}
  {%- endif -%}
  {%- set keys = [] -%}
  {%- for key in ([unique_key] if unique_key is string else unique_key) -%}
    {%- do keys.append(safe_identifier(key, 'unique_key of ' ~ model.unique_id)) -%}
  {%- endfor -%}
  {%- if predicates is string -%}{%- set predicates = [predicates] -%}{%- endif -%}
  merge into {{ target }} as DBT_INTERNAL_DEST
  using (
    select distinct {% for key in keys %}{{ key }} as `__dbt_key_{{ loop.index }}`{{ ', ' if not loop.last }}{% endfor %}
    from {{ source }}
  ) as DBT_INTERNAL_SOURCE
  on {% for key in keys %}DBT_INTERNAL_SOURCE.`__dbt_key_{{ loop.index }}` <=> DBT_INTERNAL_DEST.{{ key }}{{ ' and ' if not loop.last }}{% endfor %}
  when matched{% for predicate in predicates or [] %} and ({{ predicate }}){% endfor %} then delete
{%- endmacro %}
