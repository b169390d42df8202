{#-
  Seeds: every value is checked against its column's type before the table is touched.
  dbt-spark turns ANSI mode off in every session, so `cast('two' as int)` in its seed loader
  would silently load NULL. A bad value fails here instead, naming the seed, row, column and
  value, and the existing table is left as it was.
-#}
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
