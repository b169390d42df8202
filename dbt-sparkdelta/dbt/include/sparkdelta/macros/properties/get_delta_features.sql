{#-
  The table features a model's `delta_features` config lists, validated against the features
  Delta Lake 4.0 can turn on by name (delta.feature.<name> = 'supported').
-#}
{% macro get_delta_features(model_node, model_config) %}
  {%- set known = [
      'allowColumnDefaults', 'appendOnly', 'changeDataFeed', 'checkConstraints', 'clustering',
      'columnMapping', 'deletionVectors', 'domainMetadata', 'inCommitTimestamp', 'invariants',
      'rowTracking', 'timestampNtz', 'typeWidening', 'v2Checkpoint', 'vacuumProtocolCheck',
      'variantType'] -%}
  {%- set features = model_config.get('delta_features') or [] -%}
  {%- if features is string -%}{%- set features = [features] -%}{%- endif -%}
  {%- for feature in features -%}
    {%- if feature not in known -%}
      {{ exceptions.raise_compiler_error(
          "Model " ~ model_node.unique_id ~ ": unknown Delta table feature `" ~ feature
          ~ "` in `delta_features`. Known features: " ~ known | join(', ')) }}
    {%- endif -%}
  {%- endfor -%}
  {{ return(features | unique | list) }}
{% endmacro %}
