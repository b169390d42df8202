{#-
  Every table property a Delta model's config asks for, as one dict (pure: no SQL runs):
  - `tblproperties` as given (e.g. delta.enableChangeDataFeed, delta.enableRowTracking),
  - `delta_features`: a list of table features, as delta.feature.<name> = 'supported' (and
    allowColumnDefaults when the model has `column_defaults`),
  - NOT NULL and CHECK constraints of the model and its columns, as delta.constraints.<name>,
  - primary_key, foreign_key and unique constraints (not enforced) as dbt.constraint.<name>,
  - bookkeeping of what the project manages, so that a key removed from the config is unset on
    the next run while properties that Delta or Spark set on their own are never touched.
  Putting all of it in the CREATE's TBLPROPERTIES means the table has its features and
  constraints in its very first commit, before any row is written.
-#}
{% macro get_delta_table_properties(model_node=none, model_config=none, warn=false) %}
  {%- set model_node = model_node or model -%}
  {%- set model_config = model_config or config -%}
  {%- set user_properties = model_config.get('tblproperties') or {} -%}
  {%- if user_properties is not mapping -%}
    {{ exceptions.raise_compiler_error(
        "Model " ~ model_node.unique_id ~ ": `tblproperties` must be a mapping of property to value, got "
        ~ (user_properties | string)) }}
  {%- endif -%}
  {%- set properties = {} -%}
  {%- for key, value in user_properties.items() -%}
    {%- if key.startswith('delta.constraints.') or key.startswith('delta.feature.') or key.startswith('sparkdelta.managed_') or key.startswith('dbt.constraint.') -%}
      {{ exceptions.raise_compiler_error(
          "Model " ~ model_node.unique_id ~ ": set `" ~ key ~ "` through the `constraints` or "
          ~ "`delta_features` config, not `tblproperties`.") }}
    {%- endif -%}
    {%- do properties.update({key: (value | string | lower if value is boolean else value | string)}) -%}
  {%- endfor -%}
  {%- set unenforced = get_unenforced_constraints(model_node, warn=warn) -%}
  {%- do properties.update(unenforced) -%}
  {%- do properties.update({'sparkdelta.managed_properties': (user_properties.keys() | list + unenforced.keys() | list) | sort | join(',')}) -%}

  {%- set features = get_delta_features(model_node, model_config) -%}
  {%- if get_column_defaults(model_node, model_config) -%}
    {%- do features.append('allowColumnDefaults') -%}
  {%- endif -%}
  {%- for feature in features -%}
    {%- do properties.update({'delta.feature.' ~ feature: 'supported'}) -%}
  {%- endfor -%}

  {%- set constraints = get_delta_constraints(model_node) -%}
  {%- for name, expression in constraints.items() -%}
    {%- do properties.update({'delta.constraints.' ~ name: expression}) -%}
  {%- endfor -%}
  {%- do properties.update({'sparkdelta.managed_constraints': constraints.keys() | sort | join(',')}) -%}
  {{ return(properties) }}
{% endmacro %}
