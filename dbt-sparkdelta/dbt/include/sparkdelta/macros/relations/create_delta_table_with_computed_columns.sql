{#-
  A model with identity_columns / generated_columns: a CTAS cannot carry these columns (see the
  adapter's generated_columns.py), so its table is created (or replaced) by a CREATE OR REPLACE
  TABLE with its column list, layout, comment and every property, feature and constraint in
  one commit, and this returns the INSERT that fills it with the model's rows (naming the
  SELECT's columns, so Delta computes the others). The creation runs when the returned
  statement's block renders, just before the INSERT; a failed INSERT puts the table back as it
  was (the adapter's create_table_with_computed_columns).
  A rebuild of a table whose definition (columns, layout, properties: their digest, kept in
  the table property `sparkdelta.definition`) is the model's is one INSERT OVERWRITE instead:
  one commit, so readers never see the table empty. A --full-refresh always re-creates it.
-#}
{% macro create_delta_table_with_computed_columns(relation, sql) -%}
  {%- set contract_config = config.get('contract') -%}
  {%- set enforced = contract_config and contract_config.enforced -%}
  {%- set contract_columns = {} -%}
  {%- if enforced -%}
    {%- for name, column in model.columns.items() -%}
      {%- do contract_columns.update({name: column.data_type}) -%}
    {%- endfor -%}
  {%- endif -%}
  {%- set columns = adapter.plan_computed_columns(model.unique_id, sql,
      config.get('identity_columns'), config.get('generated_columns'), contract_columns) -%}
  {%- set inserted = [] -%}
  {%- set computed = [] -%}
  {%- for column in columns -%}
    {%- if column.from_select -%}
      {%- do inserted.append(quote_identifier(column.name)) -%}
    {%- else -%}
      {%- do computed.append('cast(null as ' ~ column.data_type ~ ') as ' ~ quote_identifier(column.name)) -%}
    {%- endif -%}
  {%- endfor -%}
  {%- if enforced -%}
    {#- dbt's contract check, on the SELECT with the columns Delta computes beside it -#}
    {{ get_assert_columns_equivalent('select *' ~ (', ' ~ computed | join(', ') if computed) ~ ' from (' ~ sql ~ ') as model_rows') }}
  {%- endif -%}
  {%- set column_list -%}
  (
    {{ adapter.computed_column_definitions(columns) }}
  )
  {%- endset -%}
  {%- set definition = local_md5(column_list ~ delta_table_options_sql(warn=false)) -%}
  {%- set create_sql -%}
  create or replace table {{ relation }} {{ column_list }}
  {{ delta_table_options_sql({'sparkdelta.definition': definition}) }}
  {%- endset -%}
  {%- set rows_sql -%}
  {{ relation }} ({{ inserted | join(', ') }})
  select {{ inserted | join(', ') }} from (
    {{ sql }}
  ) as model_rows
  {%- endset -%}
  {{ return(adapter.create_table_with_computed_columns(
      model.unique_id, relation, create_sql, 'insert into ' ~ rows_sql,
      none if should_full_refresh() else 'insert overwrite ' ~ rows_sql, definition)) }}
{%- endmacro %}
