{#-
  clone_schema: every Delta table of the target schema into the scratch schema (created),
  shallow (the clone's files are the source's), the same rows; the view is skipped.
  clone: accounts as dbt built it (a version) into a new table, then replaced by accounts as of
  a commit's timestamp (`replace: true`).
-#}
{% macro check_clone_operations(checks, scratch, built) %}
  {%- set source = target.schema -%}
  {%- set tables = [] -%}
  {%- for node in graph.nodes.values() | selectattr('resource_type', 'in', ['model', 'seed', 'snapshot'])
      if node.config.materialized != 'view' -%}
    {%- do tables.append((node.alias or node.name) | lower) -%}
  {%- endfor -%}
  {%- set tables = tables | sort -%}

  {%- set results = delta_ops.clone_schema(source_schema=source, target_schema=scratch) -%}
  {%- set cloned = run_query('show tables in ' ~ adapter.quote(scratch)).columns['tableName'].values() | map('lower') | sort | list -%}
  {%- do _expect(checks, cloned == tables,
      "clone_schema cloned the " ~ tables | length ~ " tables of " ~ source ~ " into " ~ scratch ~ ", not the view", cloned) -%}
  {%- set skipped = results | selectattr('status', 'equalto', 'skipped') | map(attribute='name') | list -%}
  {%- do _expect(checks, skipped == [source ~ '.people_names'], "clone_schema reported the view people_names as skipped", skipped) -%}
  {%- set names = [] -%}
  {%- for table in tables -%}{%- do names.extend([scratch ~ '.' ~ table, source ~ '.' ~ table]) -%}{%- endfor -%}
  {%- set counts = _row_counts(names) -%}
  {%- for table in tables -%}
    {%- set last = _history_of(scratch ~ '.' ~ table)[0] -%}
    {%- set rows = [counts[scratch ~ '.' ~ table], counts[source ~ '.' ~ table]] -%}
    {%- do _expect(checks, last.operation == 'CLONE'
        and last.parameters.get('source', '').endswith(source ~ '.' ~ table) and rows[0] == rows[1],
        "clone_schema: " ~ scratch ~ "." ~ table ~ " is a clone of " ~ source ~ "." ~ table
        ~ " with its " ~ rows[1] ~ " rows", last.operation ~ ' ' ~ last.parameters ~ ', rows ' ~ rows) -%}
  {%- endfor -%}
  {#-- zero-copy: the clone's files are the source's (absolute paths into its directory) --#}
  {%- set source_location = _detail_of(source ~ '.accounts').location -%}
  {%- set paths = run_query("select get_json_object(value, '$.add.path') as path from text.`"
      ~ _detail_of(scratch ~ '.accounts').location ~ "/_delta_log/00000000000000000000.json`"
      ~ " where get_json_object(value, '$.add') is not null").columns['path'].values() | list -%}
  {%- set elsewhere = [] -%}
  {%- for path in paths if not path.startswith(source_location ~ '/') -%}{%- do elsewhere.append(path) -%}{%- endfor -%}
  {%- do _expect(checks, paths | length == _detail_of(source ~ '.accounts').numFiles and not elsewhere,
      "clone_schema copied no file: the clone of accounts references the source's files", paths) -%}

  {#-- clone at a version, into a new table --#}
  {%- set at_build = scratch ~ '.accounts_at_build' -%}
  {%- set outcome = delta_ops.clone(source=source ~ '.accounts', target=at_build, version=built) -%}
  {%- set last = _history_of(at_build)[0] -%}
  {%- set differing = _scalar('select count(*) from ((select * from ' ~ delta_ops.relation_from_name(at_build) ~ ') except all (select * from '
      ~ delta_ops.relation_as_of(delta_ops.relation_from_name(source ~ '.accounts'), version=built) ~ '))') -%}
  {%- do _expect(checks, outcome.status == 'ok' and last.operation == 'CLONE'
      and last.parameters.get('sourceVersion') | string == built | string
      and _count_rows(at_build) == 3 and differing == 0,
      "clone at version " ~ built ~ ": " ~ at_build ~ " holds accounts as dbt built it (3 rows)",
      last.operation ~ ' ' ~ last.parameters ~ ', rows ' ~ _count_rows(at_build) ~ ', differing ' ~ differing) -%}

  {#-- clone at a timestamp, replacing that table --#}
  {%- set inserted = _history_of(source ~ '.accounts') | selectattr('version', 'equalto', built + 1) | first -%}
  {%- set outcome = delta_ops.clone(source=source ~ '.accounts', target=at_build,
      timestamp=inserted.timestamp, replace=true) -%}
  {%- set operations = _history_of(at_build) | map(attribute='operation') | list -%}
  {%- set ids = run_query('select account_id from ' ~ delta_ops.relation_from_name(at_build) ~ ' order by 1').columns[0].values() | map('int') | list -%}
  {%- do _expect(checks, outcome.status == 'ok' and operations == ['CLONE', 'DELETE', 'CLONE'] and ids == [1, 2, 3, 4],
      "clone at timestamp " ~ inserted.timestamp ~ " with replace: " ~ at_build ~ " emptied, then accounts "
      ~ "as of its insert (accounts 1-4)", operations ~ ', accounts ' ~ ids) -%}
{% endmacro %}
