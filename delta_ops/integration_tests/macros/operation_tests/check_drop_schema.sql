{#- drop_schema of the scratch schema: a dry run lists its tables and drops nothing; the real
    run drops it, and the tables it cloned still read all their files. -#}
{% macro check_drop_schema(checks, scratch) %}
  {%- set tables = run_query('show tables in ' ~ adapter.quote(scratch)).columns['tableName'].values() | sort | list -%}
  {%- set sources = [] -%}
  {%- for name in tables if run_query("show tables in " ~ adapter.quote(target.schema) ~ " like '" ~ name ~ "'").rows | length -%}
    {%- do sources.append((target.schema ~ '.' ~ name, _count_rows(target.schema ~ '.' ~ name))) -%}
  {%- endfor -%}
  {%- set outcome = delta_ops.drop_schema(schema=scratch) -%}
  {%- set left = run_query('show tables in ' ~ adapter.quote(scratch)).rows | length -%}
  {%- do _expect(checks, outcome == {'schema': scratch, 'relations': tables, 'dropped': false} and left == tables | length,
      "drop_schema is a dry run by default: it lists the " ~ tables | length ~ " tables of " ~ scratch ~ ", drops none", outcome) -%}
  {%- do delta_ops.drop_schema(schema=scratch, dry_run=false) -%}
  {%- set unread = [] -%}
  {%- for name, rows in sources if _count_rows(name) != rows -%}{%- do unread.append(name) -%}{%- endfor -%}
  {%- do _expect(checks, run_query("show schemas like '" ~ scratch ~ "'").rows | length == 0 and sources | length > 0 and not unread,
      "drop_schema dry_run false: " ~ scratch ~ " is gone; the " ~ sources | length ~ " tables its clones came from read all their rows", unread) -%}
{% endmacro %}
