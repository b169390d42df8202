{#-
  Incremental models on Delta (replaces dbt-spark's):
  - first run / --full-refresh: one CREATE OR REPLACE ... AS SELECT with every feature, property
    and constraint in the first commit (so CDF and row tracking capture the first load);
  - later runs: reconcile the table with its config (properties, features, constraints,
    clustering; column defaults after the write), then write with the strategy; session
    settings a strategy needs (schema evolution, dynamic partition overwrite) apply to that
    write alone (adapter.execute_with_settings);
  - strategies: merge (default with a unique_key), append (default without), insert_overwrite,
    replace_where, delete+insert, microbatch, cdf, or a custom `get_incremental_<name>_sql`;
  - `cdf`: the model returns change rows (cdf_changes, ChangeFeed); they are applied with the
    watermark in the same commit, on the first run and on a full refresh too
    (apply_cdf_changes); a run when no upstream has changed skips the model
    (cdf_upstreams_unchanged).
-#}
{% materialization incremental, adapter='sparkdelta', supported_languages=['sql', 'python'] -%}
  {%- set language = model['language'] -%}
  {%- set unique_key = config.get('unique_key') -%}
  {%- set strategy = config.get('incremental_strategy') or ('merge' if unique_key else 'append') -%}
  {%- set builtin = ['merge', 'append', 'insert_overwrite', 'replace_where', 'delete+insert', 'microbatch', 'cdf'] -%}
  {%- if config.get('file_format', 'delta') != 'delta' -%}
    {{ exceptions.raise_compiler_error(
        "Model " ~ model.unique_id ~ ": the sparkdelta incremental materialization writes Delta "
        ~ "tables; file_format '" ~ config.get('file_format') ~ "' is not supported here.") }}
  {%- endif -%}
  {%- if strategy not in builtin -%}
    {#- dbt's own lookup: a project macro get_incremental_<strategy>_sql, or a clear error -#}
    {%- set custom_strategy_macro = adapter.get_incremental_strategy_macro(context, strategy) -%}
  {%- endif -%}

  {%- set target_relation = this.incorporate(type='table') -%}
  {%- set existing_relation = load_relation(this) -%}
  {%- set full_build = existing_relation is none or existing_relation.is_view or should_full_refresh() -%}
  {%- set tmp_relation = this.incorporate(path={"identifier": this.identifier ~ '__dbt_tmp'}) -%}
  {%- if language == 'sql' -%}
    {%- set tmp_relation = tmp_relation.include(database=false, schema=false) -%}
  {%- endif -%}
  {%- set on_schema_change = incremental_validate_on_schema_change(
      config.get('on_schema_change'), default='fail' if strategy == 'cdf' else 'ignore') -%}

  {{ run_hooks(pre_hooks) }}

  {%- if existing_relation is not none and existing_relation.is_view -%}
    {%- do adapter.drop_relation(existing_relation) -%}
  {%- endif -%}

  {%- set detail = none -%}
  {%- if strategy == 'cdf' and not full_build and cdf_upstreams_unchanged(target_relation) -%}
    {%- do reconcile_delta_table(target_relation) -%}
    {%- do store_raw_result('main', message='OK (no upstream change)', code='cdf', rows_affected=0) -%}

  {%- elif strategy == 'cdf' -%}
    {%- if not full_build -%}
      {%- set detail = reconcile_delta_table(target_relation) -%}
      {%- if language == 'python' -%}{%- do adapter.cdf_pin_watermarked_upstreams(model.name, target_relation) -%}{%- endif -%}
    {%- endif -%}
    {#-- The change rows. For a Python model this is 'main': it records the submission method. --#}
    {%- call statement('main' if language == 'python' else 'create_tmp_relation', language=language) -%}
      {{ create_table_as(True, tmp_relation, compiled_code, language) }}
    {%- endcall -%}
    {%- set response = apply_cdf_changes(tmp_relation, target_relation, full_build, on_schema_change) -%}
    {%- if response is none and language == 'sql' -%}
      {%- do store_raw_result('main', message='OK (no upstream change)', code='cdf', rows_affected=0) -%}
    {%- elif response is not none -%}
      {%- do store_result('main' if language == 'sql' else 'cdf_apply', response=response) -%}
      {%- do apply_column_defaults(target_relation, created=full_build, detail=detail) -%}
    {%- endif -%}
    {%- do _drop_tmp_relation(tmp_relation, language) -%}

  {%- elif full_build -%}
    {%- call statement('main', language=language) -%}
      {{ create_table_as(False, target_relation, compiled_code, language) }}
    {%- endcall -%}
    {%- do apply_column_defaults(target_relation, created=true) -%}

  {%- else -%}
    {%- set detail = reconcile_delta_table(target_relation) -%}
    {%- call statement('create_tmp_relation', language=language) -%}
      {{ create_table_as(True, tmp_relation, compiled_code, language) }}
    {%- endcall -%}
    {%- if _merge_source_is_empty(strategy, custom_strategy_macro is defined, on_schema_change, tmp_relation, unique_key) -%}
      {#-- nothing to merge, and nothing else the write could change: no MERGE, no commit --#}
      {%- do store_raw_result('main', message='OK (no rows to merge)', code='merge', rows_affected=0) -%}
    {%- else -%}
      {%- do check_column_type_changes(on_schema_change, tmp_relation, existing_relation) -%}
      {%- do process_schema_changes(on_schema_change, tmp_relation, existing_relation) -%}
      {%- set target_columns = adapter.get_columns_in_relation(target_relation) | map(attribute='name') | list -%}
      {%- set source_columns = adapter.get_columns_in_relation(tmp_relation) | map(attribute='name') | list -%}

      {%- set settings = {} -%}
      {%- if strategy == 'merge' and config.get('merge_with_schema_evolution') -%}
        {%- do settings.update(adapter.merge_schema_evolution_settings()) -%}
      {%- elif strategy == 'insert_overwrite' and config.get('partition_by') -%}
        {%- do settings.update({'spark.sql.sources.partitionOverwriteMode': 'dynamic'}) -%}
      {%- elif strategy == 'delete+insert' -%}
        {%- do run_query(get_delete_matching_keys_sql(tmp_relation, target_relation, unique_key,
            config.get('incremental_predicates') or config.get('predicates'))) -%}
      {%- endif -%}

      {%- if custom_strategy_macro is defined -%}
        {%- set write_sql = custom_strategy_macro({
            'target_relation': target_relation, 'temp_relation': tmp_relation,
            'unique_key': unique_key, 'dest_columns': target_columns,
            'incremental_predicates': config.get('incremental_predicates')}) -%}
      {%- else -%}
        {%- set write_sql = get_incremental_strategy_sql(strategy, tmp_relation, target_relation, target_columns, source_columns) -%}
      {%- endif -%}
      {#-- statement('main') by hand: the settings are restored even when the write fails --#}
      {%- do write(write_sql) -%}
      {%- do store_result('main', response=adapter.execute_with_settings(write_sql, settings)) -%}
    {%- endif -%}
    {#-- after the write, so a column the write adds can get a default in the same run --#}
    {%- do apply_column_defaults(target_relation, detail=detail) -%}
    {%- do _drop_tmp_relation(tmp_relation, language) -%}
  {%- endif -%}

  {%- do optimize_after_build(target_relation) -%}
  {%- set should_revoke = should_revoke(existing_relation, full_refresh_mode) -%}
  {%- do apply_grants(target_relation, config.get('grants'), should_revoke) -%}
  {%- do persist_docs(target_relation, model) -%}
  {{ run_hooks(post_hooks) }}
  {{ return({'relations': [target_relation]}) }}
{%- endmaterialization %}


{#- SQL models stage their rows in a temporary view, Python models in a table. -#}
{% macro _drop_tmp_relation(tmp_relation, language) %}
  {%- call statement('drop_tmp_relation') -%}
    drop {{ 'view' if language == 'sql' else 'table' }} if exists {{ tmp_relation }}
  {%- endcall -%}
{% endmacro %}


{#-
  True when a `merge` run can skip its MERGE: the model's rows for this run are none, and an
  empty source changes nothing else: on_schema_change 'ignore' (no column to add or drop), no
  schema evolution, and no not_matched_by_source action (which acts on target rows whatever
  the source holds). One small query (LIMIT 1) instead of two DESCRIBEs and a MERGE that reads
  the target and commits an empty version. A unique_key that is not a column of the model is
  left to the MERGE, which names it, as on a run with rows.
-#}
{% macro _merge_source_is_empty(strategy, custom_strategy, on_schema_change, tmp_relation, unique_key) %}
  {%- if strategy != 'merge' or custom_strategy or on_schema_change != 'ignore'
      or config.get('merge_with_schema_evolution') or config.get('not_matched_by_source_action') -%}
    {{ return(false) }}
  {%- endif -%}
  {#- `select 1`, not `*`: Spark's Thrift server cannot describe a result with a VARIANT column -#}
  {%- if run_query('select 1 from ' ~ tmp_relation ~ ' limit 1').rows | length > 0 -%}
    {{ return(false) }}
  {%- endif -%}
  {%- set columns = adapter.get_columns_in_relation(tmp_relation) | map(attribute='name') | map('lower') | list -%}
  {%- set keys = [unique_key] if unique_key is string else (unique_key or []) -%}
  {%- for key in keys -%}
    {%- if key | replace('`', '') | trim | lower not in columns -%}{{ return(false) }}{%- endif -%}
  {%- endfor -%}
  {{ return(true) }}
{% endmacro %}
