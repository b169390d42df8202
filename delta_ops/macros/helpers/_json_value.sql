{#- Complex columns arrive as JSON text (Thrift and dbt's agate tables alike), or a map as a
    list of (key, value) pairs (the embedded session's cursor). -#}
{% macro _json_value(value, default) %}
  {%- if value is none -%}{{ return(default) }}{%- endif -%}
  {%- if value is string -%}{{ return(fromjson(value, default)) }}{%- endif -%}
  {%- if value is not mapping and value is iterable and default is mapping -%}
    {%- set pairs = {} -%}
    {%- for pair in value -%}{%- do pairs.update({pair[0]: pair[1]}) -%}{%- endfor -%}
    {{ return(pairs) }}
  {%- endif -%}
  {{ return(value) }}
{% endmacro %}
