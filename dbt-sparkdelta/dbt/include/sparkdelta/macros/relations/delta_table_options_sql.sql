{#-
  The clauses after a Delta CREATE OR REPLACE TABLE's name (and column list): USING delta, the
  layout, location, comment and every property and feature of the node's config, with
  `extra_properties` (the adapter's own) beside them (pure: returns text; `warn`: say so when a
  constraint is not enforced). Models, models with computed columns and seeds create their
  tables with it.
-#}
{% macro delta_table_options_sql(extra_properties={}, warn=true) -%}
  {%- set properties = get_delta_table_properties(warn=warn) -%}
  {%- do properties.update(extra_properties) -%}
  using delta
  {{ get_delta_layout_sql() }}
  {{ location_clause() }}
  {{ comment_clause() }}
  {{ get_tblproperties_sql(properties) }}
{%- endmacro %}
