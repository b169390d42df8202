{#-
  `optimize_after_build: true` (table and incremental models; default false): compact the table
  right after the model's write, in the same run: OPTIMIZE ... ZORDER BY (`zorder_by`), or plain
  OPTIMIZE for a liquid-clustered table (it clusters by its clustering columns). Opt-in because
  it rewrites files on every run (dbt-databricks' automatic OPTIMIZE is one its users asked to
  switch off); OPTIMIZE commits nothing when no file needs compacting. The options are
  validated before the build (validate_delta_model_config).
-#}
{% macro optimize_after_build(relation) %}
  {%- if config.get('optimize_after_build', false) -%}
    {%- set zorder_by = config_column_list('zorder_by') -%}
    {%- call statement('optimize_after_build') -%}
      optimize {{ relation }}{{ ' zorder by (' ~ zorder_by | join(', ') ~ ')' if zorder_by }}
    {%- endcall -%}
  {%- endif -%}
{% endmacro %}
