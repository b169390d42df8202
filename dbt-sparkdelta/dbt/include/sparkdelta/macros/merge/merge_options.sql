{#- The model config options that shape a MERGE (documented in get_delta_merge_sql). -#}
{% macro merge_options() %}
  {{ return([
      'unique_key', 'source_alias', 'target_alias', 'matched_delete_condition',
      'matched_condition', 'not_matched_condition', 'not_matched_by_source_action',
      'not_matched_by_source_condition', 'not_matched_by_source_set', 'skip_matched_step',
      'skip_not_matched_step', 'merge_update_columns', 'merge_exclude_columns',
      'merge_with_schema_evolution']) }}
{% endmacro %}
