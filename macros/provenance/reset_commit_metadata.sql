{#- Hook SQL that removes the commit tag set by set_commit_metadata. -#}
{% macro reset_commit_metadata() %}
  {{ return(adapter.dispatch('reset_commit_metadata', 'lakehouse')()) }}
{% endmacro %}

{% macro default__reset_commit_metadata() -%}
  reset spark.databricks.delta.commitInfo.userMetadata
{%- endmacro %}
