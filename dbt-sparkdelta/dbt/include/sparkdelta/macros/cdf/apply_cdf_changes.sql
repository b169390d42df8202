{#-
  The write of the `cdf` strategy (see materializations/incremental.sql): applies the change
  rows the model built in `tmp_relation` (its columns + _change_type, _commit_version,
  _cdf_watermark; see cdf_changes for SQL models, ChangeFeed for Python models) to the model's
  Delta table, and returns the adapter response of the write (none when nothing was written).

  The watermark (upstream versions processed) is committed in the SAME Delta commit as the data:
  the user metadata of the MERGE / CREATE OR REPLACE commit, set for that one statement
  (adapter.execute_with_commit_metadata). A crash before the commit leaves table and watermark
  as they were; after it, both are done: a rerun neither loses nor repeats a change. Delta's
  other atomic marker, idempotent-write transaction ids (txnAppId/txnVersion), is a
  DataFrameWriter option for appends and overwrites and cannot be read back with SQL, so it
  fits neither a MERGE nor a Thrift endpoint.

  `full_build`: the table is (re)created from the net change rows. Otherwise, with no change
  rows nothing is written and the table keeps its version, unless the run pinned upstream
  versions past the watermark (commits that changed no data: an OPTIMIZE, a property change):
  then an empty commit records the advanced watermark, so later runs do not read them again.
  A MERGE whose change rows change nothing commits its watermark the same way.
  When the model's columns differ from the table's, `on_schema_change` decides (dbt's rules;
  the `cdf` default is 'fail').
-#}
{% macro apply_cdf_changes(tmp_relation, target_relation, full_build, on_schema_change) %}
  {%- set meta_columns = ['_change_type', '_commit_version', '_commit_timestamp', '_cdf_watermark'] -%}
  {%- set unique_key = config.get('unique_key') -%}
  {%- if not unique_key -%}
    {{ exceptions.raise_compiler_error(
        "Model " ~ model.name ~ ": incremental_strategy='cdf' needs a unique_key (the grain the "
        ~ "changes are applied on).") }}
  {%- endif -%}
  {%- set keys = [] -%}
  {%- for key in ([unique_key] if unique_key is string else unique_key) -%}
    {%- do keys.append(quote_identifier(key)) -%}
  {%- endfor -%}

  {#- DESCRIBE, not a `select *`: Spark's Thrift server cannot describe a VARIANT result column -#}
  {%- set tmp_columns = adapter.get_columns_in_relation(tmp_relation) -%}
  {%- set columns = tmp_columns | map(attribute='name') | list -%}
  {%- for required in ['_change_type', '_commit_version', '_cdf_watermark'] if required not in columns -%}
    {{ exceptions.raise_compiler_error(
        "Model " ~ model.name ~ " (incremental_strategy='cdf') returns no column " ~ required
        ~ ": select the change rows of cdf_changes(ref(...)) (SQL) or of the adapter's "
        ~ "ChangeFeed (Python) with their _change_type, _commit_version and _cdf_watermark "
        ~ "columns.") }}
  {%- endfor -%}
  {%- set data_columns = columns | reject('in', meta_columns) | list -%}

  {#-- One query: how many change rows, whether any is a snapshot, and the watermarks read. --#}
  {%- set summary = run_query(
      "select count(*) as change_rows, count_if(_change_type = 'snapshot') as snapshot_rows, "
      ~ "to_json(collect_set(_cdf_watermark)) as watermarks from " ~ tmp_relation).rows[0] -%}
  {%- set stored = none if full_build else adapter.cdf_watermark(model.name, target_relation) -%}
  {%- set is_snapshot = stored is none or summary['snapshot_rows'] > 0 -%}
  {#-- The new watermark: the stored one, advanced to the versions the change rows were read at
       (with no change row: the versions this run pinned, over commits that changed no data). --#}
  {%- set watermark = {} -%}
  {%- do watermark.update(stored or {}) -%}
  {%- set no_rows = summary['change_rows'] == 0 and not full_build and not is_snapshot -%}
  {%- if no_rows -%}
    {%- for table, version in adapter.cdf_pinned_versions(model.name).items() -%}
      {%- do watermark.update({table: [version, watermark.get(table, -1)] | max}) -%}
    {%- endfor -%}
    {%- if watermark == stored -%}
      {{ log("Model " ~ model.name ~ ": no upstream change since " ~ tojson(stored) ~ ", nothing written.") }}
      {{ return(none) }}
    {%- endif -%}
  {%- endif -%}
  {%- for read in fromjson(summary['watermarks'] or '[]') -%}
    {%- for table, version in (fromjson(read or '{}') or {}).items() -%}
      {%- do watermark.update({table: [version, watermark.get(table, -1)] | max}) -%}
    {%- endfor -%}
  {%- endfor -%}

  {%- if full_build -%}
    {%- set quoted = [] -%}
    {%- for column in data_columns -%}{%- do quoted.append(quote_identifier(column)) -%}{%- endfor -%}
    {%- set apply_sql = create_table_as(False, target_relation,
        'select ' ~ quoted | join(', ') ~ ' from ('
        ~ get_cdf_net_changes_sql(tmp_relation, keys)
        ~ ") as net_changes where _change_type != 'delete'", 'sql') -%}
  {%- else -%}
    {%- set merge_columns = _cdf_merge_columns(tmp_relation, tmp_columns, target_relation, data_columns, on_schema_change) -%}
    {%- set apply_sql = get_cdf_merge_sql(target_relation, tmp_relation, keys, merge_columns, is_snapshot, config.get('matched_condition')) -%}
  {%- endif -%}
  {#-- a MERGE that changes no row (no change row; or deletes of rows already gone, as after
       an erasure of every layer) commits the advanced watermark alone: else Delta skips the
       commit and the next run reads those upstream versions again, their change data too --#}
  {{ return(adapter.execute_with_commit_metadata(apply_sql, adapter.cdf_watermark_metadata(watermark), record_empty=not full_build)) }}
{% endmacro %}


{#-
  The quoted columns the MERGE writes: the model's columns when they are the table's (names and
  types); otherwise dbt's on_schema_change decides (fail, ignore: the columns both have,
  append_new_columns and sync_all_columns: the table is altered first, a type widened in place
  where Delta can: check_column_type_changes).
-#}
{% macro _cdf_merge_columns(tmp_relation, tmp_columns, target_relation, data_columns, on_schema_change) %}
  {%- set existing_columns = adapter.get_columns_in_relation(target_relation) -%}
  {%- set existing = existing_columns | map(attribute='name') | list -%}
  {%- set wanted = data_columns | map('lower') | list -%}
  {%- set model_types = [] -%}
  {%- for column in tmp_columns if column.name | lower in wanted -%}
    {%- do model_types.append((column.name | lower, column.data_type)) -%}
  {%- endfor -%}
  {%- set table_types = [] -%}
  {%- for column in existing_columns -%}
    {%- do table_types.append((column.name | lower, column.data_type)) -%}
  {%- endfor -%}
  {%- if (table_types | sort | list) != (model_types | sort | list) -%}
    {%- set data_view = tmp_relation.incorporate(path={'identifier': tmp_relation.identifier ~ '__data'}).include(database=false, schema=false) -%}
    {%- set quoted = [] -%}
    {%- for column in data_columns -%}{%- do quoted.append(quote_identifier(column)) -%}{%- endfor -%}
    {%- do run_query('create or replace temporary view ' ~ data_view ~ ' as select '
        ~ quoted | join(', ') ~ ' from ' ~ tmp_relation) -%}
    {%- do check_column_type_changes(on_schema_change, data_view, target_relation) -%}
    {%- do process_schema_changes(on_schema_change, data_view, target_relation) -%}
    {%- set existing = adapter.get_columns_in_relation(target_relation) | map(attribute='name') | list -%}
  {%- endif -%}
  {%- set written = [] -%}
  {%- for column in data_columns if column | lower in existing | map('lower') | list -%}
    {%- do written.append(quote_identifier(column)) -%}
  {%- endfor -%}
  {{ return(written) }}
{% endmacro %}
