{#- A Spark SQL string literal for any text: backslashes and single quotes escaped. -#}
{% macro sql_string(value) %}
  {{ return("'" ~ (value | string).replace('\\', '\\\\').replace("'", "\\'") ~ "'") }}
{% endmacro %}
