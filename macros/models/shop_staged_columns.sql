{#-
  The staging of a shop bronze change: its columns renamed and cast (shop_entity), then the
  change log's, as a select list over a relation with the bronze columns. The staging views
  select it from the source; the change-driven silver models from the source's change feed (a
  view cannot be read by Delta version), so both stage a change the same way.
-#}
{% macro shop_staged_columns(source_table) -%}
    {%- for name, expression in shop_entity(source_table).columns.items() %}
        {{ expression }}{% if expression != name %} as {{ name }}{% endif %},
    {%- endfor %}

        -- change log
        _op as change_op,
        _batch_id as batch_id,
        _loaded_at as loaded_at
{%- endmacro %}
