{#- A list argument given as a list or as one comma-separated string; names the argument. -#}
{% macro _as_list(value, what) %}
  {%- if value is none -%}
    {{ return([]) }}
  {%- elif value is string -%}
    {{ return(value.split(',') | map('trim') | reject('equalto', '') | list) }}
  {%- elif value is iterable and value is not mapping -%}
    {{ return(value | list) }}
  {%- endif -%}
  {{ exceptions.raise_compiler_error(
      "Invalid " ~ what ~ " " ~ (value | string | tojson) ~ ": give a list of names.") }}
{% endmacro %}
