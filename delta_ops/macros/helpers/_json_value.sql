{#- Complex columns arrive as JSON text (Thrift and dbt's agate tables alike). -#}
{% macro _json_value(value, default) %}
  {%- if value is none -%}{{ return(default) }}{%- endif -%}
  {%- if value is string -%}{{ return(fromjson(value, default)) }}{%- endif -%}
  {{ return(value) }}
{% endmacro %}
