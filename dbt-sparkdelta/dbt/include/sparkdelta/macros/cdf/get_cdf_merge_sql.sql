{#-
  MERGE of the net change rows of `source` into `target`: deletes, updates, inserts; with
  `is_snapshot`, target rows missing from the snapshot are deleted too. `keys` and `columns`
  are quoted identifiers; keys match null-safely. The aliases are dbt's (DBT_INTERNAL_SOURCE,
  DBT_INTERNAL_DEST); `matched_condition` (the model's config) is the update's condition.
-#}
{% macro get_cdf_merge_sql(target, source, keys, columns, is_snapshot=false, matched_condition=none) -%}
merge into {{ target }} as DBT_INTERNAL_DEST
using (
    {{ get_cdf_net_changes_sql(source, keys) }}
) as DBT_INTERNAL_SOURCE
on {% for key in keys %}DBT_INTERNAL_DEST.{{ key }} <=> DBT_INTERNAL_SOURCE.{{ key }}{% if not loop.last %} and {% endif %}{% endfor %}
when matched and DBT_INTERNAL_SOURCE._change_type = 'delete' then delete
when matched{% if matched_condition %} and ({{ matched_condition }}){% endif %} then update set
    {% for column in columns -%}
    DBT_INTERNAL_DEST.{{ column }} = DBT_INTERNAL_SOURCE.{{ column }}{% if not loop.last %},{% endif %}
    {% endfor %}
when not matched and DBT_INTERNAL_SOURCE._change_type != 'delete' then insert (
    {{ columns | join(', ') }}
) values (
    {% for column in columns %}DBT_INTERNAL_SOURCE.{{ column }}{% if not loop.last %}, {% endif %}{% endfor %}
)
{%- if is_snapshot %}
when not matched by source then delete
{%- endif %}
{%- endmacro %}
