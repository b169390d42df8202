{#-
  Snapshots on Delta (replaces dbt-spark's, whose flow it keeps: the first run creates the
  table from the query; later runs build a staging view with dbt's snapshot_staging_table and
  MERGE it on dbt_scd_id). Every strategy of dbt (timestamp, check, a custom
  `snapshot_<name>_strategy`) works as there; besides them, `strategy: cdf`
  (snapshot_cdf_strategy): the check strategy over the keys the upstream's change data feed
  names since the snapshot's last run, with the upstream version read committed in the same
  Delta commit as the snapshot's rows (the watermark, as `cdf` models keep it), so a run's cost
  follows the change, not the table, and a run with no upstream commit writes nothing.
-#}
{% materialization snapshot, adapter='sparkdelta' %}
  {%- set target_table = model.get('alias', model.get('name')) -%}
  {%- set strategy_name = config.get('strategy') -%}
  {%- set grant_config = config.get('grants') -%}
  {%- if config.get('file_format', 'delta') != 'delta' -%}
    {{ exceptions.raise_compiler_error(
        "Snapshot " ~ model.unique_id ~ ": the sparkdelta snapshot materialization writes Delta "
        ~ "tables (its MERGE needs them); file_format '" ~ config.get('file_format')
        ~ "' is not supported here.") }}
  {%- endif -%}

  {%- set target_relation_exists, target_relation = get_or_create_relation(
      database=none, schema=model.schema, identifier=target_table, type='table') -%}
  {%- if target_relation_exists and not target_relation.is_delta -%}
    {{ exceptions.raise_compiler_error(
        "Snapshot " ~ model.unique_id ~ ": the existing table " ~ target_relation
        ~ " is not a Delta table; drop it (its history is lost) or convert it with "
        ~ "CONVERT TO DELTA, then run the snapshot again.") }}
  {%- endif -%}
  {%- if not adapter.check_schema_exists(model.database, model.schema) -%}
    {%- do create_schema(model.schema) -%}
  {%- endif -%}
  {%- if not target_relation.is_table -%}
    {%- do exceptions.relation_wrong_type(target_relation, 'table') -%}
  {%- endif -%}

  {{ run_hooks(pre_hooks, inside_transaction=False) }}
  {{ run_hooks(pre_hooks, inside_transaction=True) }}

  {%- set strategy_macro = strategy_dispatch(strategy_name) -%}
  {%- set strategy = strategy_macro(model, "snapshotted_data", "source_data", model['config'], target_relation_exists) -%}
  {#-- the change-feed read of `strategy: cdf` (snapshot_cdf_strategy), none for the others --#}
  {%- set cdf = strategy.get('cdf') -%}

  {%- if cdf and target_relation_exists and cdf.plan.kind == 'nothing' -%}
    {{ log("Snapshot " ~ model.name ~ ": no commit to " ~ cdf.plan.table ~ " since version "
        ~ cdf.plan.end ~ ", nothing written.") }}
    {%- do store_raw_result('main', message='OK (no upstream change)', code='cdf', rows_affected=0) -%}

  {%- else -%}
    {%- if not target_relation_exists -%}
      {%- set final_sql = create_table_as(False, target_relation, build_snapshot_table(strategy, model['compiled_code'])) -%}
    {%- else -%}
      {%- set columns = config.get("snapshot_table_column_names") or get_snapshot_table_column_names() -%}
      {{ adapter.valid_snapshot_target(target_relation, columns) }}
      {%- if cdf -%}
        {%- set staging_table = _snapshot_cdf_staging_table(strategy, sql, target_relation) -%}
      {%- else -%}
        {%- set staging_table = spark_build_snapshot_staging_table(strategy, sql, target_relation) -%}
      {%- endif -%}
      {%- do adapter.expand_target_column_types(from_relation=staging_table, to_relation=target_relation) -%}
      {%- do create_columns(target_relation, _snapshot_row_columns(adapter.get_missing_columns(staging_table, target_relation))) -%}
      {%- set quoted_source_columns = [] -%}
      {%- for column in _snapshot_row_columns(adapter.get_columns_in_relation(staging_table)) -%}
        {%- do quoted_source_columns.append(adapter.quote(column.name)) -%}
      {%- endfor -%}
      {%- set final_sql = snapshot_merge_sql(target=target_relation, source=staging_table, insert_cols=quoted_source_columns) -%}
    {%- endif -%}

    {%- if cdf -%}
      {#-- the watermark in the same commit as the rows; a MERGE that changes no row (the
           upstream's commits changed no key's state) commits it alone, so they are not read
           again --#}
      {%- set watermark = adapter.cdf_watermark_metadata({cdf.plan.table: cdf.plan.end}) -%}
      {%- do store_result('main', response=adapter.execute_with_commit_metadata(final_sql, watermark, record_empty=target_relation_exists)) -%}
    {%- else -%}
      {%- call statement('main') -%}
        {{ final_sql }}
      {%- endcall -%}
    {%- endif -%}
  {%- endif -%}

  {%- set should_revoke = should_revoke(target_relation_exists, full_refresh_mode=false) -%}
  {%- do apply_grants(target_relation, grant_config, should_revoke) -%}
  {%- do persist_docs(target_relation, model) -%}

  {{ run_hooks(post_hooks, inside_transaction=True) }}
  {{ adapter.commit() }}
  {%- if staging_table is defined -%}
    {%- do post_snapshot(staging_table) -%}
    {%- if cdf and cdf.plan.kind == 'changes' -%}
      {%- do adapter.drop_relation(_snapshot_cdf_scope(target_relation)) -%}
    {%- endif -%}
  {%- endif -%}
  {{ run_hooks(post_hooks, inside_transaction=False) }}
  {{ return({'relations': [target_relation]}) }}
{% endmaterialization %}


{#- The staging columns a snapshot's table holds: not dbt's bookkeeping (dbt_change_type, and
    dbt_unique_key or dbt_unique_key_<n> for a key of several columns). -#}
{% macro _snapshot_row_columns(columns) %}
  {%- set kept = [] -%}
  {%- for column in columns if column.name | lower != 'dbt_change_type' and not (column.name | lower).startswith('dbt_unique_key') -%}
    {%- do kept.append(column) -%}
  {%- endfor -%}
  {{ return(kept) }}
{% endmacro %}
