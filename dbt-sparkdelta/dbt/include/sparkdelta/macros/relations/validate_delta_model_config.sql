{#-
  Fail early, naming the model, on config that open-source Delta 4.0 on Spark 4.0 cannot honour.
-#}
{% macro validate_delta_model_config() %}
  {%- set model_id = model.unique_id -%}
  {%- if config.get('liquid_clustered_by') and config.get('partition_by') -%}
    {{ exceptions.raise_compiler_error(
        "Model " ~ model_id ~ ": `liquid_clustered_by` and `partition_by` cannot be combined; "
        ~ "liquid clustering replaces partitioning. Keep one of them.") }}
  {%- endif -%}
  {%- if config.get('clustered_by') or config.get('buckets') -%}
    {{ exceptions.raise_compiler_error(
        "Model " ~ model_id ~ ": Delta tables do not support bucketing (`clustered_by`/`buckets`); "
        ~ "use `liquid_clustered_by` for clustering.") }}
  {%- endif -%}
  {%- if config.get('optimize_after_build', false) is not boolean -%}
    {{ exceptions.raise_compiler_error(
        "Model " ~ model_id ~ ": optimize_after_build must be true or false, got "
        ~ (config.get('optimize_after_build') | string | tojson) ~ ".") }}
  {%- endif -%}
  {%- if config.get('zorder_by') and config.get('liquid_clustered_by') -%}
    {{ exceptions.raise_compiler_error(
        "Model " ~ model_id ~ ": zorder_by cannot be combined with liquid_clustered_by "
        ~ "(OPTIMIZE clusters a liquid-clustered table by its clustering columns). Keep one.") }}
  {%- endif -%}
  {%- set properties = config.get('tblproperties') or {} -%}
  {%- if properties is mapping and (properties.get('delta.enableIcebergCompatV2') | string | lower) == 'true' -%}
    {%- if (properties.get('delta.columnMapping.mode') | string | lower) not in ('name', 'id')
        or (properties.get('delta.enableDeletionVectors') | string | lower) == 'true' -%}
      {{ exceptions.raise_compiler_error(
          "Model " ~ model_id ~ ": delta.enableIcebergCompatV2 needs 'delta.columnMapping.mode': "
          ~ "'name' (or 'id') and no deletion vectors (Delta's IcebergCompatV2 rules); set the "
          ~ "first and leave out 'delta.enableDeletionVectors'.") }}
    {%- endif -%}
  {%- endif -%}
  {%- if config.get('identity_columns') or config.get('generated_columns') -%}
    {%- if model.language != 'sql' or config.get('materialized') not in ('table', 'incremental') -%}
      {{ exceptions.raise_compiler_error(
          "Model " ~ model_id ~ ": identity_columns / generated_columns are for SQL table and "
          ~ "incremental models; compute the column in the node's own SQL or DataFrame.") }}
    {%- endif -%}
    {%- if config.get('materialized') == 'incremental' and (config.get('incremental_strategy') or 'merge') not in ('merge', 'append', 'delete+insert') -%}
      {{ exceptions.raise_compiler_error(
          "Model " ~ model_id ~ ": identity_columns / generated_columns work with the incremental "
          ~ "strategies merge, append and delete+insert, not `" ~ config.get('incremental_strategy') ~ "`.") }}
    {%- endif -%}
    {%- if config.get('materialized') == 'incremental' and config.get('on_schema_change') in ('fail', 'sync_all_columns') -%}
      {{ exceptions.raise_compiler_error(
          "Model " ~ model_id ~ ": on_schema_change `" ~ config.get('on_schema_change') ~ "` would take "
          ~ "the columns Delta computes (identity_columns / generated_columns, not in the SELECT) for "
          ~ "removed ones: use `ignore` or `append_new_columns`.") }}
    {%- endif -%}
  {%- endif -%}
{% endmacro %}
