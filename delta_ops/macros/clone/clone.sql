{#-
  Shallow-clone a Delta table (at its latest state, a version or a timestamp) into a new,
  independent Delta table: zero-copy, the clone references the source's files; writes to the
  clone never change the source. An existing target is refused unless `replace: true`; the
  target's schema is created when it does not exist.
-#}
{% macro clone(source, target, version=none, timestamp=none, replace=false) %}
  {%- do delta_ops._require_sparkdelta('clone') -%}
  {%- set source_relation = delta_ops.relation_from_name(source, 'clone source') -%}
  {%- set target_relation = delta_ops.relation_from_name(target, 'clone target') -%}
  {%- set sql = delta_ops.get_clone_sql(source_relation, target_relation, version, timestamp, replace) -%}
  {%- set as_of = delta_ops._time_travel_clause(version, timestamp, 'clone of ' ~ source_relation) -%}
  {%- set outcome = delta_ops._clone_one(source_relation, target_relation, sql, replace, as_of) -%}
  {{ log('clone: ' ~ source_relation ~ ' -> ' ~ target_relation ~ ' ' ~ outcome.status ~ ': ' ~ outcome.note, info=True) }}
  {%- if outcome.status == 'failed' -%}
    {{ exceptions.raise_compiler_error('clone ' ~ source_relation ~ ' -> ' ~ target_relation ~ ': ' ~ outcome.note) }}
  {%- endif -%}
  {{ return(outcome) }}
{% endmacro %}

{#-
  Checks and runs one clone statement; {'status', 'note'} like the maintenance steps. Everything
  is validated before the target is touched (the source and, with `as_of`, its version or
  timestamp). Open-source Delta clones only into an empty table (DELTA_UNSUPPORTED_NON_EMPTY_CLONE),
  so a replacement empties the target first; when the clone then fails, the target is restored
  to the version it had, and the note says so.
-#}
{% macro _clone_one(source, target, sql, replace, as_of='') %}
  {%- if replace is not boolean -%}
    {{ exceptions.raise_compiler_error(
        "Invalid clone replace " ~ (replace | string | tojson) ~ ": give true or false.") }}
  {%- endif -%}
  {%- set source_detail = describe_detail(source, raise_on_error=false) -%}
  {%- if source_detail.error -%}{{ return(delta_ops._failed('source: ' ~ source_detail.error)) }}{%- endif -%}
  {%- if source_detail.format != 'delta' -%}
    {{ return(delta_ops._failed('source is not a Delta table (format ' ~ source_detail.format ~ ')')) }}
  {%- endif -%}
  {%- if as_of -%}
    {%- set readable = delta_ops._try_sql('select 1 from ' ~ source ~ as_of ~ ' limit 0') -%}
    {%- if readable.error -%}
      {{ return(delta_ops._failed('source' ~ as_of ~ ': ' ~ readable.error ~ '. Nothing was changed')) }}
    {%- endif -%}
  {%- endif -%}
  {%- set existing = describe_detail(target, raise_on_error=false) -%}
  {%- if not existing.error -%}
    {%- if existing.format != 'delta' -%}
      {{ return(delta_ops._failed('target exists and is not a Delta table (format ' ~ existing.format ~ ')')) }}
    {%- endif -%}
    {%- set chain = delta_ops._clone_chain_to(source, source_detail, existing) -%}
    {%- if chain -%}
      {{ return(delta_ops._failed('the source is ' ~ ('the target itself' if chain | length == 1 else
          'a clone of the target (' ~ chain | join(' cloned from ') ~ ')') ~ ': replacing the '
          ~ 'target by it would empty it first. Nothing was changed. Roll a table back with the '
          ~ 'restore operation; copy it by cloning into a new table')) }}
    {%- endif -%}
    {%- if not replace -%}
      {{ return(delta_ops._failed('target exists (' ~ existing.numFiles ~ ' files). replace: true would empty '
          ~ 'it (DELETE, a new version) and make it a clone of the source (another version); its '
          ~ 'earlier versions stay in its history until VACUUM')) }}
    {%- endif -%}
    {%- set version_before = delta_ops.table_version(target) -%}
    {%- set emptied = delta_ops._try_sql('delete from ' ~ target) -%}
    {%- if emptied.error -%}
      {{ return(delta_ops._failed('emptying the target: ' ~ emptied.error ~ '. Nothing was changed')) }}
    {%- endif -%}
  {%- endif -%}
  {%- if existing.error -%}
    {#-- a new table may go into a new schema, as dbt creates a model's schema --#}
    {%- set schema = delta_ops._try_sql('create schema if not exists ' ~ safe_identifier(target.schema, 'clone target schema')) -%}
    {%- if schema.error -%}
      {{ return(delta_ops._failed('creating the target schema ' ~ target.schema ~ ': ' ~ schema.error)) }}
    {%- endif -%}
  {%- endif -%}
  {%- set result = delta_ops._try_sql(sql) -%}
  {%- if result.error and not existing.error -%}
    {%- set restored = delta_ops._try_sql('restore table ' ~ target ~ ' to version as of ' ~ version_before) -%}
    {{ return(delta_ops._failed(result.error ~ '. ' ~ (
        'The target was restored to its version ' ~ version_before ~ ' (as before the clone)'
        if not restored.error else
        'Restoring the target to its version ' ~ version_before ~ ' failed too (' ~ restored.error
        ~ '): it is empty; run the restore operation with version ' ~ version_before))) }}
  {%- endif -%}
  {%- if result.error -%}{{ return(delta_ops._failed(result.error)) }}{%- endif -%}
  {%- set metrics = delta_ops._rows_as_dicts(result.table)[0] -%}
  {{ return({'status': 'ok', 'note': ('replaced; ' if not existing.error else '') ~ 'cloned '
      ~ metrics.get('source_num_of_files') ~ ' files (' ~ metrics.get('source_table_size')
      ~ ' bytes) by reference'}) }}
{% endmacro %}

{#-
  The clone chain from `name` (with its DESCRIBE DETAIL) back to the table of `target_detail`,
  through the CLONE commits of each table's history: [name] when it is that table, [name, its
  clone source, ...] when it descends from it by clones, [] when it does not.
-#}
{% macro _clone_chain_to(name, detail, target_detail, depth=0) %}
  {%- if detail.location == target_detail.location -%}{{ return([name]) }}{%- endif -%}
  {%- if depth < 10 -%}
    {%- for entry in delta_ops._rows_as_dicts(run_query('describe history ' ~ name)) if 'CLONE' in entry.operation -%}
      {%- set parent = delta_ops._json_value(entry.operationParameters, {}).get('source') -%}
      {#- A clone source that no longer exists cannot be the target. -#}
      {%- set parent_detail = describe_detail(parent, raise_on_error=false) if parent else {'error': 'unknown'} -%}
      {%- set chain = [] if parent_detail.error else delta_ops._clone_chain_to(parent, parent_detail, target_detail, depth + 1) -%}
      {%- if chain -%}{{ return([name] + chain) }}{%- endif -%}
    {%- endfor -%}
  {%- endif -%}
  {{ return([]) }}
{% endmacro %}
