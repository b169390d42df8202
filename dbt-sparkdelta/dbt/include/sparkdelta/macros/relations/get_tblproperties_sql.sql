{#- TBLPROPERTIES ('k' = 'v', ...) with every key and value escaped; empty when none. -#}
{% macro get_tblproperties_sql(properties) -%}
  {%- if properties -%}
    tblproperties (
    {%- for key in properties | sort %}
      {{ sql_string(key) }} = {{ sql_string(properties[key]) }}{{ ',' if not loop.last }}
    {%- endfor %}
    )
  {%- endif -%}
{%- endmacro %}
