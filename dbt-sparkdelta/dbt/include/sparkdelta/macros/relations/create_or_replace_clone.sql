{#-
  `dbt clone` of a Delta table: a SHALLOW CLONE of the state's table. Open-source Delta refuses
  CREATE OR REPLACE ... SHALLOW CLONE into a table that has rows (DELTA_UNSUPPORTED_NON_EMPTY_CLONE),
  which `dbt clone --full-refresh` asks for, so an existing relation is dropped first.
-#}
{% macro sparkdelta__create_or_replace_clone(this_relation, defer_relation) %}
  {%- set existing = load_relation(this_relation) -%}
  {%- if existing is not none -%}
    {%- do adapter.drop_relation(existing) -%}
  {%- endif -%}
  create table {{ this_relation }} shallow clone {{ defer_relation }}
{% endmacro %}
