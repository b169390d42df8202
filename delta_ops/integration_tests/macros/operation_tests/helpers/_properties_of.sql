{#- SHOW TBLPROPERTIES of a table as a dict. -#}
{% macro _properties_of(name) %}
  {%- set properties = {} -%}
  {%- for row in run_query('show tblproperties ' ~ delta_ops.relation_from_name(name)).rows -%}
    {%- do properties.update({row[0]: row[1]}) -%}
  {%- endfor -%}
  {{ return(properties) }}
{% endmacro %}
