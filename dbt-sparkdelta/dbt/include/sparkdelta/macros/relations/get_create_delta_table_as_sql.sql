{#-
  CREATE OR REPLACE TABLE ... USING delta AS SELECT for a model: layout (CLUSTER BY or
  PARTITIONED BY), location, comment and every property, feature and constraint in one atomic
  commit (pure: returns text). A model with identity or generated columns is created with its
  column list, then filled (create_delta_table_with_computed_columns).
-#}
{% macro get_create_delta_table_as_sql(relation, sql) -%}
  {%- do validate_delta_model_config() -%}
  {%- if config.get('identity_columns') or config.get('generated_columns') -%}
    {{ return(create_delta_table_with_computed_columns(relation, sql)) }}
  {%- endif -%}
  {%- set contract_config = config.get('contract') -%}
  {%- if contract_config and contract_config.enforced -%}
    {{ get_assert_columns_equivalent(sql) }}
    {%- set sql = get_select_subquery(sql) -%}
  {%- endif -%}
  create or replace table {{ relation }}
  {{ delta_table_options_sql() }}
  as
  {{ sql }}
{%- endmacro %}
