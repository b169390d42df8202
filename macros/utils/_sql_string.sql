{#- A Spark SQL string literal holding `value` verbatim: backslashes and quotes escaped. -#}
{% macro _sql_string(value) %}
  {{- return("'" ~ (value | string).replace('\\', '\\\\').replace("'", "\\'") ~ "'") -}}
{% endmacro %}
