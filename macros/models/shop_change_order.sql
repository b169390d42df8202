{#-
  The order in which changes of one key of a shop table win, as one comparable value: a struct
  of `updated_at`, then the batch id, then a delete over an update over an insert, then the
  entity's other values (in a struct, as in `order by ... desc`, NULL is the lowest). Never
  the file or commit order, so any grouping of the changes gives the same winner. `relation`:
  the alias the columns are read from (none: unqualified).
-#}
{% macro shop_change_order(source_table, relation=none) -%}
    {%- set entity = shop_entity(source_table) -%}
    {%- set prefix = relation ~ '.' if relation else '' -%}
    struct(
        {{ prefix }}updated_at,
        {{ prefix }}batch_id,
        case {{ prefix }}change_op when 'D' then 3 when 'U' then 2 else 1 end
        {%- for column in entity.columns if column not in [entity.key, 'updated_at'] %},
        {{ prefix }}{{ column }}
        {%- endfor %}
    )
{%- endmacro %}


{#-
  The `matched_condition` of a silver model that folds appends (shop_current_state): a key's
  recomputed state replaces its row in the table; an appended change (_change_type 'insert')
  only when it wins over the row the table holds, by shop_change_order.
-#}
{% macro shop_change_wins(source_table) -%}
    DBT_INTERNAL_SOURCE._change_type != 'insert'
    or {{ shop_change_order(source_table, 'DBT_INTERNAL_SOURCE') }}
    > {{ shop_change_order(source_table, 'DBT_INTERNAL_DEST') }}
{%- endmacro %}
