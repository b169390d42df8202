{#- A map column of DESCRIBE HISTORY as a dict, whether it arrives as JSON text, a dict or a
    list of [key, value] pairs. -#}
{% macro _as_mapping(value) %}
  {%- if value is none -%}{{ return({}) }}{%- endif -%}
  {%- if value is string -%}{{ return(fromjson(value, {})) }}{%- endif -%}
  {%- if value is mapping -%}{{ return(value) }}{%- endif -%}
  {%- set pairs = {} -%}
  {%- for pair in value -%}{%- do pairs.update({pair[0]: pair[1]}) -%}{%- endfor -%}
  {{ return(pairs) }}
{% endmacro %}
