{#- Complex columns arrive as JSON text (Thrift and dbt's agate tables alike); a map may arrive
    as a list of [key, value] pairs (the embedded session's rows), read as a dict. A struct from
    the embedded session arrives as a list of values without their names: `default`. -#}
{% macro _json_value(value, default) %}
  {%- if value is none -%}{{ return(default) }}{%- endif -%}
  {%- set parsed = fromjson(value, default) if value is string else value -%}
  {%- if default is mapping and parsed is not mapping -%}
    {%- set pairs = {} -%}
    {%- for pair in parsed if pair is not string and pair is iterable and pair | length == 2 and pair[0] is string -%}
      {%- do pairs.update({pair[0]: pair[1]}) -%}
    {%- endfor -%}
    {{ return(pairs if pairs | length == parsed | length else default) }}
  {%- endif -%}
  {{ return(parsed) }}
{% endmacro %}
