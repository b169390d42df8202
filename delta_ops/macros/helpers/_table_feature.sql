{#- A Delta table feature name from an argument (e.g. deletionVectors), or a clear error. -#}
{% macro _table_feature(feature, operation) %}
  {%- if feature is not string or not modules.re.fullmatch('[A-Za-z][A-Za-z0-9-]*', feature) -%}
    {{ exceptions.raise_compiler_error(
        "Invalid " ~ operation ~ " feature " ~ (feature | string | tojson)
        ~ ": give a Delta table feature name such as deletionVectors or rowTracking.") }}
  {%- endif -%}
  {{ return(feature) }}
{% endmacro %}
