{#- The Relation of 'schema.table'. -#}
{% macro _relation(name) %}
  {%- set parts = name.split('.') -%}
  {{ return(api.Relation.create(schema=parts[0], identifier=parts[1], type='table')) }}
{% endmacro %}
