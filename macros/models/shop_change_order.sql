{#-
  The order in which changes of one key of a shop table win, as one comparable value: a struct
  of `updated_at`, then the batch id, then a delete over an update over an insert, then the
  entity's other values (in a struct, as in `order by ... desc`, NULL is the lowest). Never
  the file or commit order, so any grouping of the changes gives the same winner.
-#}
{% macro shop_change_order(source_table) -%}
    {%- set entity = shop_entity(source_table) -%}
    struct(
        updated_at,
        batch_id,
        case change_op when 'D' then 3 when 'U' then 2 else 1 end
        {%- for column in entity.columns if column not in [entity.key, 'updated_at'] %},
        {{ column }}
        {%- endfor %}
    )
{%- endmacro %}
