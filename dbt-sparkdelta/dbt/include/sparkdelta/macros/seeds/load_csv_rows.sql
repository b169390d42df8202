{#-
  Seed rows. On the `session` and `connect` methods, and on `thrift` with a Spark Connect
  endpoint beside it (`spark_connect_url`), the rows go through a SparkSession as a DataFrame
  of text (NULL for an empty cell) and one INSERT ... SELECT casts them to the columns' types
  (the adapter's seeds.py): no value is ever written into SQL text, so quotes, backslashes,
  unicode and empty cells load exactly (dbt-spark formats each value into the statement as
  '<value>', so an empty cell became the text 'None' and O'Brien a syntax error). Other methods
  keep dbt-spark's bound parameters, which their drivers escape.
-#}
{% macro sparkdelta__load_csv_rows(model, agate_table) %}
  {%- if flags.EMPTY -%}
    {#- `dbt seed --empty` / `dbt build --empty`: the table with its columns, no rows -#}
    {{ return('-- --empty: no rows loaded') }}
  {%- endif -%}
  {%- set column_override = model['config'].get('column_types', {}) -%}
  {%- set types = [] -%}
  {%- for col_name in agate_table.column_names -%}
    {%- do types.append(column_override.get(col_name) or adapter.convert_type(agate_table, loop.index0)) -%}
  {%- endfor -%}
  {%- set sql = adapter.load_seed_rows(this.render(), agate_table, types) -%}
  {%- if sql is none -%}
    {{ return(spark__load_csv_rows(model, agate_table)) }}
  {%- endif -%}
  {{ return(sql) }}
{% endmacro %}
