{#-
  Seeds: every value is checked against its column's type before the table is touched.
  dbt-spark turns ANSI mode off in every session, so `cast('two' as int)` in its seed loader
  would silently load NULL; and it drops an existing seed table before loading it again. A bad
  value fails here instead, naming the seed, row, column and value, and nothing is dropped.
-#}
{% macro sparkdelta__reset_csv_table(model, full_refresh, old_relation, agate_table) %}
  {%- do sparkdelta__check_csv_values(model, agate_table) -%}
  {{ return(spark__reset_csv_table(model, full_refresh, old_relation, agate_table)) }}
{% endmacro %}

{% macro sparkdelta__create_csv_table(model, agate_table) %}
  {%- do sparkdelta__check_csv_values(model, agate_table) -%}
  {{ return(spark__create_csv_table(model, agate_table)) }}
{% endmacro %}

{% macro sparkdelta__check_csv_values(model, agate_table) %}
  {%- set overrides = model['config'].get('column_types', {}) -%}
  {%- set integer = '[+-]?[0-9]+(\\.0*)?' -%}
  {%- set number = '[+-]?([0-9]+\\.?[0-9]*|\\.[0-9]+)([eE][+-]?[0-9]+)?' -%}
  {%- for column in agate_table.column_names -%}
    {%- set index = loop.index0 -%}
    {%- set type = (overrides.get(column) or adapter.convert_type(agate_table, index)) | lower | trim -%}
    {%- set pattern = none -%}
    {%- if type in ['int', 'integer', 'bigint', 'smallint', 'tinyint', 'long', 'short', 'byte'] -%}
      {%- set pattern = integer -%}
    {%- elif type.startswith('decimal') or type.startswith('numeric') or type in ['double', 'float', 'real'] -%}
      {%- set pattern = number -%}
    {%- elif type == 'boolean' -%}
      {%- set pattern = '(?i)true|false' -%}
    {%- endif -%}
    {%- if pattern -%}
      {%- for row in agate_table.rows -%}
        {%- set value = row[index] -%}
        {%- if value is not none and not modules.re.fullmatch(pattern, value | string | trim) -%}
          {{ exceptions.raise_compiler_error(
              "Seed " ~ model.name ~ " (" ~ model.original_file_path ~ "), data row " ~ loop.index
              ~ ", column " ~ column ~ ": value '" ~ value ~ "' is not a valid " ~ type
              ~ "; nothing was loaded and the existing table is unchanged.") }}
        {%- endif -%}
      {%- endfor -%}
    {%- endif -%}
  {%- endfor -%}
{% endmacro %}

{#-
  Seed rows. On the `session` and `connect` methods, and on `thrift` with a Spark Connect
  endpoint beside it (`spark_connect_url`), the rows go through a SparkSession as a DataFrame
  of text (NULL for an empty cell) and are cast to the columns' types by one
  INSERT ... SELECT: no value is ever written into SQL text, so quotes, backslashes, unicode and
  empty cells load exactly (dbt-spark formats each value into the statement as '<value>', so an
  empty cell became the text 'None' and O'Brien a syntax error). Other methods keep dbt-spark's
  bound parameters, which their drivers escape (slowly: minutes for 30,000 rows over Thrift).
-#}
{% macro sparkdelta__load_csv_rows(model, agate_table) %}
  {%- if flags.EMPTY -%}
    {#- `dbt seed --empty` / `dbt build --empty`: the table with its columns, no rows -#}
    {{ return('-- --empty: no rows loaded') }}
  {%- endif -%}
  {%- if not adapter.loads_seeds_as_dataframes() -%}
    {{ return(spark__load_csv_rows(model, agate_table)) }}
  {%- endif -%}
  {%- set column_override = model['config'].get('column_types', {}) -%}
  {%- set types = [] -%}
  {%- for col_name in agate_table.column_names -%}
    {%- do types.append(column_override.get(col_name) or adapter.convert_type(agate_table, loop.index0)) -%}
  {%- endfor -%}
  {%- set sql = adapter.load_seed_rows(this.render(), agate_table, types) -%}
  {{ return(sql) }}
{% endmacro %}
