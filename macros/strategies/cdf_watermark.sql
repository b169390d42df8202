{#-
  The watermark a `cdf` model committed last: {"schema.table": version} of the upstream versions
  it has processed, read from the user metadata of its newest commit that has one (DESCRIBE
  HISTORY). None when the table has no such commit. lakehouse.change_feed reads it the same way.
-#}
{% macro cdf_watermark(relation) %}
  {{ return(adapter.dispatch('cdf_watermark', 'lakehouse')(relation)) }}
{% endmacro %}

{% macro default__cdf_watermark(relation) %}
  {%- set history = run_query('describe history ' ~ relation) -%}
  {%- for row in history.rows -%}
    {%- set metadata = fromjson(row['userMetadata'] or '', none) -%}
    {%- if metadata is mapping and metadata.get('lakehouse_cdf_watermark') is mapping -%}
      {{ return(metadata['lakehouse_cdf_watermark']) }}
    {%- endif -%}
  {%- endfor -%}
  {{ return(none) }}
{% endmacro %}
