{#- ALTER TABLE ... DROP FEATURE text, optionally with TRUNCATE HISTORY. -#}
{% macro get_drop_table_feature_sql(relation, feature, truncate_history=false) %}
  {{ return('alter table ' ~ relation ~ ' drop feature ' ~ delta_ops._table_feature(feature, 'drop_table_feature')
      ~ (' truncate history' if truncate_history else '')) }}
{% endmacro %}
