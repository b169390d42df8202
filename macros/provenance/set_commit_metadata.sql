{#-
  Hook SQL that tags every Delta commit of the node being built with where it came from
  (dbt invocation id, node unique id, target, git revision when known), so DESCRIBE HISTORY
  tells which dbt run wrote each version. Paired with reset_commit_metadata as post-hook and at
  the end of the run, so the tag never leaks into unrelated commits.
-#}
{% macro set_commit_metadata() %}
  {{ return(adapter.dispatch('set_commit_metadata', 'lakehouse')()) }}
{% endmacro %}

{% macro default__set_commit_metadata() -%}
  {%- set metadata = {
      'dbt_invocation_id': invocation_id,
      'dbt_node': model.unique_id if model is defined and model else none,
      'dbt_target': target.name,
      'git_revision': adapter.git_revision(),
  } -%}
  set spark.databricks.delta.commitInfo.userMetadata = {{ tojson(metadata) | replace(';', ',') }}
{%- endmacro %}
