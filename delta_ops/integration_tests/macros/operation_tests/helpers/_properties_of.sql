{#- SHOW TBLPROPERTIES of a table as a dict. -#}
{% macro _properties_of(name) %}
  {%- set properties = {} -%}
  {%- for row in run_query('show tblproperties ' ~ _relation(name)).rows -%}
    {%- do properties.update({row[0]: row[1]}) -%}
  {%- endfor -%}
  {{ return(properties) }}
{% endmacro %}
