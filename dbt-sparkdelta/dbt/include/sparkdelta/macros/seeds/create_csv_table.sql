{#-
  A seed's table with its rows, new or replacing an existing Delta seed: the values checked
  first (check_csv_values), then ONE statement and ONE Delta commit,
  CREATE OR REPLACE TABLE ... USING delta (layout, location, comment, properties, features and
  constraints) AS SELECT the rows cast to their types (`column_types`, else dbt's inference),
  with the column comments of persist_docs. Readers never find the table missing or empty, and
  it keeps its history and time travel. How the rows travel: the adapter's seeds.py.
  Another file format keeps dbt-spark's CREATE TABLE, its rows loaded by load_csv_rows.
-#}
{% macro sparkdelta__create_csv_table(model, agate_table) %}
  {%- do sparkdelta__check_csv_values(model, agate_table) -%}
  {%- if config.get('file_format') != 'delta' -%}
    {{ return(spark__create_csv_table(model, agate_table)) }}
  {%- endif -%}
  {%- do validate_delta_model_config() -%}
  {%- set quote_seed_column = model['config'].get('quote_columns', None) -%}
  {%- set view_columns = [] -%}
  {%- for name in agate_table.column_names -%}
    {%- set column = adapter.quote_seed_column(name | string, quote_seed_column) -%}
    {%- set description = (model.columns.get(name) or {}).get('description') if config.persist_column_docs() else none -%}
    {%- do view_columns.append(column ~ (' comment ' ~ sql_string(description) if description else '')) -%}
  {%- endfor -%}
  {%- set head -%}
    create or replace table {{ this.render() }}
    {{ delta_table_options_sql() }}
  {%- endset -%}
  {#- `dbt seed --empty` / `dbt build --empty`: the table with its columns, no rows -#}
  {%- set rows = agate_table.limit(0) if flags.EMPTY else agate_table -%}
  {{ return(adapter.replace_seed_table(this.render(), head, view_columns, rows,
      adapter.seed_column_types(agate_table, model['config'].get('column_types', {})))) }}
{% endmacro %}
