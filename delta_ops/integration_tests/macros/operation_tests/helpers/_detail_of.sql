{#- DESCRIBE DETAIL of a table as a dict (the adapter's describe_detail). -#}
{% macro _detail_of(name) %}
  {{ return(describe_detail(delta_ops.relation_from_name(name))) }}
{% endmacro %}
