{#-
  Shallow-clone every Delta table of a schema into another schema (created when missing), e.g.
  a zero-copy development or CI environment. Other tables and views are skipped with a note.
  Existing target tables are refused unless `replace: true`.
-#}
{% macro clone_schema(source_schema, target_schema, replace=false) %}
  {%- do delta_ops._require_sparkdelta('clone_schema') -%}
  {%- set quoted_target = safe_identifier(target_schema, 'clone_schema target_schema') -%}
  {%- do safe_identifier(source_schema, 'clone_schema source_schema') -%}
  {%- if source_schema | lower == target_schema | lower -%}
    {{ exceptions.raise_compiler_error("clone_schema: source_schema and target_schema are the same.") }}
  {%- endif -%}
  {%- set selection = delta_ops._select_delta_tables('clone_schema', schema=source_schema) -%}
  {%- do run_query('create schema if not exists ' ~ quoted_target) -%}
  {{ return(delta_ops._run_for_each_table('clone_schema', selection, delta_ops._clone_schema_table,
      {'target_schema': target_schema, 'replace': replace})) }}
{% endmacro %}

{% macro _clone_schema_table(table, options) %}
  {%- set target = delta_ops.relation_from_name(options.target_schema ~ '.' ~ table.relation.identifier) -%}
  {%- set sql = delta_ops.get_clone_sql(table.relation, target, replace=options.replace) -%}
  {{ return(delta_ops._clone_one(table.relation, target, sql, options.replace)) }}
{% endmacro %}
