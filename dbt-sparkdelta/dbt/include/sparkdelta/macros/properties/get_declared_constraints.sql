{#-
  Every constraint a model declares with dbt's `constraints`, on the model and on its columns,
  as (column name or none, constraint) pairs.
-#}
{% macro get_declared_constraints(model_node) %}
  {%- set declared = [] -%}
  {%- for constraint in model_node.get('constraints') or [] -%}
    {%- do declared.append((none, constraint)) -%}
  {%- endfor -%}
  {%- for column_name, column in (model_node.get('columns') or {}).items() -%}
    {%- for constraint in column.get('constraints') or [] -%}
      {%- do declared.append((column_name, constraint)) -%}
    {%- endfor -%}
  {%- endfor -%}
  {{ return(declared) }}
{% endmacro %}
