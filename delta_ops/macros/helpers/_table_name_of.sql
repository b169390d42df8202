{#- 'schema.table' of a node of dbt's graph: a model's, seed's or snapshot's alias, a source's
    identifier. -#}
{% macro _table_name_of(node) %}
  {{ return(node.schema ~ '.' ~ (node.identifier if node.resource_type == 'source' else (node.alias or node.name))) }}
{% endmacro %}
