{#- delete+insert, step one: an atomic MERGE that deletes the target rows whose key the new
    data carries (null-safe, like the merge strategy). -#}
{% macro get_delete_matching_keys_sql(source, target, unique_key) -%}
  {%- if not unique_key -%}
    {{ exceptions.raise_compiler_error(
        "Model " ~ model.unique_id ~ ": incremental_strategy 'delete+insert' needs a `unique_key`.") }}
  {%- endif -%}
  {%- set keys = [] -%}
  {%- for key in ([unique_key] if unique_key is string else unique_key) -%}
    {%- do keys.append(safe_identifier(key, 'unique_key of ' ~ model.unique_id)) -%}
  {%- endfor -%}
  merge into {{ target }} as target
  using (select distinct {{ keys | join(', ') }} from {{ source }}) as source
  on {% for key in keys %}source.{{ key }} <=> target.{{ key }}{{ ' and ' if not loop.last }}{% endfor %}
  when matched then delete
{%- endmacro %}
