{#-
  The clauses after a Delta CREATE OR REPLACE TABLE's name (and column list): USING delta, the
  layout, location, comment and every property and feature of the node's config (pure: returns
  text). Models, models with computed columns and seeds create their tables with it.
-#}
{% macro delta_table_options_sql() -%}
  using delta
  {{ get_delta_layout_sql() }}
  {{ location_clause() }}
  {{ comment_clause() }}
  {{ get_tblproperties_sql(get_delta_table_properties(warn=true)) }}
{%- endmacro %}
