{#-
  Why a change from one of the shop's bronze tables cannot be loaded: a SQL expression over the
  staged change's columns that is null for a good change and the reason for a bad one (the
  common rules, then the entity's own, shop_entity). The silver models keep the changes where
  it is null; int_shop_rows_quarantined keeps the others.
-#}
{% macro shop_change_rejection(source_table) -%}
    {%- set entity = shop_entity(source_table) -%}
    {#- one line, so the expression sits anywhere in a select or a where -#}
    {%- set rules = [
        ("change_op is null or change_op not in ('I', 'U', 'D')", 'change_op is not I, U or D'),
        (entity.key ~ ' is null', entity.key ~ ' is null'),
        ('updated_at is null', 'updated_at is null'),
    ] + entity.rules -%}
    case{% for condition, reason in rules %} when {{ condition }} then '{{ reason }}'{% endfor %} end
{%- endmacro %}
