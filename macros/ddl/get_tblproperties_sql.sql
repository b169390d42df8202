{#- TBLPROPERTIES ('k' = 'v', ...) with every key and value escaped; empty when none. -#}
{% macro get_tblproperties_sql(properties) %}
  {{ return(adapter.dispatch('get_tblproperties_sql', 'lakehouse')(properties)) }}
{% endmacro %}

{% macro default__get_tblproperties_sql(properties) -%}
  {%- if properties -%}
    tblproperties (
    {%- for key in properties | sort %}
      {{ lakehouse.sql_string(key) }} = {{ lakehouse.sql_string(properties[key]) }}{{ ',' if not loop.last }}
    {%- endfor %}
    )
  {%- endif -%}
{%- endmacro %}
