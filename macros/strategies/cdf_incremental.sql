{#-
  The `cdf` incremental strategy (`incremental_strategy='cdf'`, `unique_key` required): applies
  the change rows the model built in `tmp_relation` (see materializations/incremental.sql). The
  model returns change rows (its columns + _change_type, _commit_version, _cdf_watermark; see
  lakehouse.cdf_changes for SQL models and lakehouse.change_feed for Python models) and this
  applies their net effect per key to the Delta table.

  The watermark (upstream versions processed) is committed in the SAME Delta commit as the data:
  the user metadata of the MERGE / CREATE OR REPLACE commit, set just around that one statement
  (adapter.execute_with_commit_metadata). A crash before the commit leaves table and watermark
  as they were; after it, both are done: a rerun neither loses nor repeats a change. Delta's
  other atomic marker, idempotent-write transaction ids (txnAppId/txnVersion), is a
  DataFrameWriter option for appends and overwrites and cannot be read back with SQL, so it
  fits neither a MERGE nor a Thrift endpoint.

  No change rows (no new upstream version): nothing is written, the table keeps its version.
-#}
{% macro cdf_incremental(tmp_relation, language) %}
  {{ return(adapter.dispatch('cdf_incremental', 'lakehouse')(tmp_relation, language)) }}
{% endmacro %}

{% macro default__cdf_incremental(tmp_relation, language) %}
  {%- set meta_columns = ['_change_type', '_commit_version', '_commit_timestamp', '_cdf_watermark'] -%}
  {%- set unique_key = config.get('unique_key') -%}
  {%- if not unique_key -%}
    {{ exceptions.raise_compiler_error(
        "Model " ~ model.name ~ ": incremental_strategy='cdf' needs a unique_key (the grain the "
        ~ "changes are applied on).") }}
  {%- endif -%}
  {%- if config.get('file_format', 'delta') != 'delta' -%}
    {{ exceptions.raise_compiler_error(
        "Model " ~ model.name ~ ": incremental_strategy='cdf' needs file_format='delta'.") }}
  {%- endif -%}
  {%- set keys = [] -%}
  {%- for key in ([unique_key] if unique_key is string else unique_key) -%}
    {%- do keys.append(lakehouse.safe_identifier(key, 'unique_key of model ' ~ model.name)) -%}
  {%- endfor -%}

  {%- set target_relation = this.incorporate(type='table') -%}
  {%- set existing_relation = load_relation(this) -%}
  {%- set replace = existing_relation is none or existing_relation.is_view or should_full_refresh() -%}
  {%- set columns = run_query('select * from ' ~ tmp_relation ~ ' limit 0').column_names -%}
  {%- for required in ['_change_type', '_commit_version', '_cdf_watermark'] if required not in columns -%}
    {{ exceptions.raise_compiler_error(
        "Model " ~ model.name ~ " (incremental_strategy='cdf') returns no column " ~ required
        ~ ": select the change rows of lakehouse.cdf_changes(ref(...)) (SQL) or of "
        ~ "lakehouse.change_feed (Python) with their _change_type, _commit_version and "
        ~ "_cdf_watermark columns.") }}
  {%- endfor -%}
  {%- set data_columns = [] -%}
  {%- for column in columns if column not in meta_columns -%}
    {%- do data_columns.append(lakehouse.safe_identifier(column, 'column of model ' ~ model.name)) -%}
  {%- endfor -%}

  {%- set summary = run_query(
      "select count(*) as change_rows, count_if(_change_type = 'snapshot') as snapshot_rows from "
      ~ tmp_relation).rows[0] -%}
  {%- set stored = none if replace else lakehouse.cdf_watermark(target_relation) -%}
  {%- set is_snapshot = stored is none or summary['snapshot_rows'] > 0 -%}

  {%- if summary['change_rows'] == 0 and not replace and not is_snapshot -%}
    {{ log("Model " ~ model.name ~ ": no upstream change since " ~ tojson(stored) ~ ", nothing written.") }}
    {%- if language == 'sql' -%}
      {%- do store_raw_result('main', message='OK (no upstream change)', code='cdf', rows_affected=0) -%}
    {%- endif -%}
  {%- else -%}
    {#-- The new watermark: the stored one, advanced to the versions the change rows were read at. --#}
    {%- set watermark = {} -%}
    {%- do watermark.update(stored or {}) -%}
    {%- for row in run_query('select distinct _cdf_watermark from ' ~ tmp_relation).rows -%}
      {%- for table, version in (fromjson(row[0] or '{}') or {}).items() -%}
        {%- do watermark.update({table: [version, watermark.get(table, -1)] | max}) -%}
      {%- endfor -%}
    {%- endfor -%}

    {%- if replace -%}
      {%- set apply_sql = create_table_as(False, target_relation,
          'select ' ~ data_columns | join(', ') ~ ' from ('
          ~ lakehouse.get_cdf_net_changes_sql(tmp_relation, keys)
          ~ ") as net_changes where _change_type != 'delete'", 'sql') -%}
    {%- else -%}
      {%- do lakehouse._cdf_check_columns(target_relation, data_columns) -%}
      {%- set apply_sql = lakehouse.get_cdf_merge_sql(
          target_relation, tmp_relation, keys, data_columns, is_snapshot) -%}
    {%- endif -%}

    {#-- Test hook (comma-separated model names): a crash after the change rows are built, before
         the commit. --#}
    {%- if model.name in env_var('LAKEHOUSE_CDF_CRASH_BEFORE_COMMIT', '').split(',') -%}
      {{ exceptions.raise_compiler_error("Simulated crash of " ~ model.name ~ " before its commit.") }}
    {%- endif -%}
    {%- set response = adapter.execute_with_commit_metadata(
        apply_sql, tojson({'lakehouse_cdf_watermark': watermark}, sort_keys=true)) -%}
    {%- do store_result('main' if language == 'sql' else 'cdf_apply', response=response) -%}
    {%- do lakehouse.apply_column_defaults(target_relation, created=replace) -%}
  {%- endif -%}

  {%- if language == 'python' -%}
    {%- call statement('drop_tmp_relation') -%}
      drop table if exists {{ tmp_relation }}
    {%- endcall -%}
  {%- endif -%}

  {%- do persist_docs(target_relation, model) -%}
{% endmacro %}


{#- The columns of the change rows must be the table's: name what differs and what to do. -#}
{% macro _cdf_check_columns(target_relation, data_columns) %}
  {%- set existing = [] -%}
  {%- for column in run_query('select * from ' ~ target_relation ~ ' limit 0').column_names -%}
    {%- do existing.append('`' ~ column ~ '`') -%}
  {%- endfor -%}
  {%- set added = data_columns | reject('in', existing) | list -%}
  {%- set removed = existing | reject('in', data_columns) | list -%}
  {%- if added or removed -%}
    {{ exceptions.raise_compiler_error(
        "Model " ~ model.name ~ " (incremental_strategy='cdf'): its columns changed (new: "
        ~ (added | join(', ') or 'none') ~ "; gone: " ~ (removed | join(', ') or 'none')
        ~ "). Rebuild it with `dbt run --full-refresh -s " ~ model.name ~ "`.") }}
  {%- endif -%}
{% endmacro %}
