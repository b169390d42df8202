{#-
  Turn a table name from an argument ('table' or 'schema.table') into a Relation, validating
  both parts with safe_identifier. A bare name lives in the target schema.
-#}
{% macro relation_from_name(name, what='table') %}
  {%- set parts = (name | string).split('.') -%}
  {%- if parts | length > 2 -%}
    {{ exceptions.raise_compiler_error(
        "Invalid " ~ what ~ " " ~ (name | string | tojson) ~ ": expected 'table' or 'schema.table'."
    ) }}
  {%- endif -%}
  {%- set schema_name = parts[0] if parts | length == 2 else target.schema -%}
  {%- set table_name = parts[-1] -%}
  {%- do safe_identifier(schema_name, what ~ ' schema') -%}
  {%- do safe_identifier(table_name, what) -%}
  {{ return(api.Relation.create(schema=schema_name, identifier=table_name, type='table')) }}
{% endmacro %}
