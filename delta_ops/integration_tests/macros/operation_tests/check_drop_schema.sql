{#- drop_schema of the scratch schema: a dry run lists its tables and drops nothing; the real
    run drops it, and the tables it cloned still read all their files. -#}
{% macro check_drop_schema(checks, scratch) %}
  {%- set tables = run_query('show tables in ' ~ adapter.quote(scratch)).columns['tableName'].values() | sort | list -%}
  {%- set in_target = run_query('show tables in ' ~ adapter.quote(target.schema)).columns['tableName'].values() | list -%}
  {%- set sources = [] -%}
  {%- for name in tables if name in in_target -%}{%- do sources.append(target.schema ~ '.' ~ name) -%}{%- endfor -%}
  {%- set counts = _row_counts(sources) -%}
  {%- set outcome = delta_ops.drop_schema(schema=scratch) -%}
  {%- set left = run_query('show tables in ' ~ adapter.quote(scratch)).rows | length -%}
  {%- do _expect(checks, outcome == {'schema': scratch, 'relations': tables, 'dropped': false} and left == tables | length,
      "drop_schema is a dry run by default: it lists the " ~ tables | length ~ " tables of " ~ scratch ~ ", drops none", outcome) -%}
  {%- do delta_ops.drop_schema(schema=scratch, dry_run=false) -%}
  {%- set unread = [] -%}
  {%- for name, rows in _row_counts(sources).items() if rows != counts[name] -%}{%- do unread.append(name) -%}{%- endfor -%}
  {%- do _expect(checks, run_query("show schemas like '" ~ scratch ~ "'").rows | length == 0 and sources | length > 0 and not unread,
      "drop_schema dry_run false: " ~ scratch ~ " is gone; the " ~ sources | length ~ " tables its clones came from read all their rows", unread) -%}
{% endmacro %}
