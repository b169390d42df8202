{#-
  Add a Delta table feature (delta.feature.<name> = 'supported') to the selected tables. This
  upgrades the table protocol: clients that do not know the feature can no longer read or
  write the table.
-#}
{% macro enable_table_feature(feature, models=none, tags=none, schema=none, pattern=none) %}
  {%- do delta_ops._table_feature(feature, 'enable_table_feature') -%}
  {%- set selection = delta_ops._select_delta_tables('enable_table_feature', models, tags, schema, pattern) -%}
  {{ return(delta_ops._run_for_each_table('enable_table_feature', selection, delta_ops._enable_table_feature_table,
      {'feature': feature})) }}
{% endmacro %}

{% macro _enable_table_feature_table(table, options) %}
  {%- if options.feature in table.detail.tableFeatures -%}
    {{ return({'status': 'ok', 'note': options.feature ~ ' already enabled'}) }}
  {%- endif -%}
  {%- set result = delta_ops._try_sql(delta_ops.get_set_tblproperties_sql(
      table.relation, {'delta.feature.' ~ options.feature: 'supported'})) -%}
  {%- if result.error -%}{{ return(delta_ops._failed(result.error)) }}{%- endif -%}
  {%- set after = describe_detail(table.relation, raise_on_error=false) -%}
  {{ return({'status': 'ok', 'note': 'enabled ' ~ options.feature ~ '; protocol reader '
      ~ after.minReaderVersion ~ ', writer ' ~ after.minWriterVersion}) }}
{% endmacro %}
