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
  {%- for option in ['identity_columns', 'generated_columns'] -%}
    {%- if config.get(option) -%}
      {{ exceptions.raise_compiler_error(
          "Model " ~ model_id ~ ": `" ~ option ~ "` is not supported: Delta Lake 4.0.1 on Spark 4.0 "
          ~ "rejects identity and generated columns in SQL DDL. Compute the column in the model's SQL.") }}
    {%- endif -%}
  {%- endfor -%}
{% endmacro %}
