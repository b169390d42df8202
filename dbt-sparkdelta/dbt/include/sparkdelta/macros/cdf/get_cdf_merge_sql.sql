{#-
  MERGE of the net change rows of `source` into `target`: deletes, updates, inserts; with
  `is_snapshot`, target rows missing from the snapshot are deleted too. `keys` and `columns`
  are quoted identifiers; keys match null-safely.
-#}
{% macro get_cdf_merge_sql(target, source, keys, columns, is_snapshot=false) -%}
merge into {{ target }} as dest
using (
    {{ get_cdf_net_changes_sql(source, keys) }}
) as src
on {% for key in keys %}dest.{{ key }} <=> src.{{ key }}{% if not loop.last %} and {% endif %}{% endfor %}
when matched and src._change_type = 'delete' then delete
when matched then update set
    {% for column in columns -%}
    dest.{{ column }} = src.{{ column }}{% if not loop.last %},{% endif %}
    {% endfor %}
when not matched and src._change_type != 'delete' then insert (
    {{ columns | join(', ') }}
) values (
    {% for column in columns %}src.{{ column }}{% if not loop.last %}, {% endif %}{% endfor %}
)
{%- if is_snapshot %}
when not matched by source then delete
{%- endif %}
{%- endmacro %}
