{#-
  Seed rows. A Delta seed got its rows in the CREATE OR REPLACE TABLE ... AS SELECT of
  create_csv_table (dbt's seed materialization always calls it, directly or through
  reset_csv_table, before this). Another file format gets them by one INSERT ... SELECT of the
  rows cast to their types, sent as the adapter's seeds.py decides: no value is ever written
  into SQL text, so quotes, backslashes, unicode and empty cells load exactly (dbt-spark formats
  each value into the statement as '<value>', so an empty cell became the text 'None' and
  O'Brien a syntax error).
-#}
{% macro sparkdelta__load_csv_rows(model, agate_table) %}
  {%- if config.get('file_format') == 'delta' -%}
    {{ return('-- the rows: in create or replace table ... as select above') }}
  {%- endif -%}
  {%- if flags.EMPTY -%}
    {#- `dbt seed --empty` / `dbt build --empty`: the table with its columns, no rows -#}
    {{ return('-- --empty: no rows loaded') }}
  {%- endif -%}
  {{ return(adapter.insert_seed_rows(this.render(), agate_table,
      adapter.seed_column_types(agate_table, model['config'].get('column_types', {})))) }}
{% endmacro %}
