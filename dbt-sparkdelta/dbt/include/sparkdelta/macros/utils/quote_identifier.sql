{#-
  Quote a column name that comes from the data (a table's or a query's own columns): any name
  Spark accepts, spaces and dashes included, with backticks doubled. Names that come from a
  config or an argument are validated instead (safe_identifier).
-#}
{% macro quote_identifier(name) %}
  {{ return('`' ~ (name | string | replace('`', '``')) ~ '`') }}
{% endmacro %}
