{#-
  Remove a Delta table feature from the selected tables (ALTER TABLE ... DROP FEATURE), which
  rewrites data and may need `truncate_history: true` to drop the history that still uses the
  feature, so time travel before that point is lost. A dry run by default: `dry_run: false`
  acts.
-#}
{% macro drop_table_feature(feature, models=none, tags=none, schema=none, pattern=none, truncate_history=false, dry_run=true) %}
  {%- do delta_ops._require_booleans('drop_table_feature', {'dry_run': dry_run, 'truncate_history': truncate_history}) -%}
  {%- do delta_ops._table_feature(feature, 'drop_table_feature') -%}
  {%- set selection = delta_ops._select_delta_tables('drop_table_feature', models, tags, schema, pattern) -%}
  {{ return(delta_ops._run_for_each_table('drop_table_feature' ~ (' (dry run)' if dry_run else ''), selection,
      delta_ops._drop_table_feature_table, {'feature': feature, 'truncate_history': truncate_history, 'dry_run': dry_run})) }}
{% endmacro %}

{% macro _drop_table_feature_table(table, options) %}
  {%- if options.feature not in table.detail.tableFeatures -%}
    {{ return({'status': 'ok', 'note': options.feature ~ ' is not a feature of this table (features: '
        ~ table.detail.tableFeatures | join(', ') ~ ')'}) }}
  {%- endif -%}
  {%- set sql = delta_ops.get_drop_table_feature_sql(table.relation, options.feature, options.truncate_history) -%}
  {%- if options.dry_run -%}
    {{ return({'status': 'dry run', 'note': 'would run: ' ~ sql}) }}
  {%- endif -%}
  {%- set result = delta_ops._try_sql(sql) -%}
  {%- if result.error -%}{{ return(delta_ops._failed(result.error)) }}{%- endif -%}
  {%- set after = describe_detail(table.relation, raise_on_error=false) -%}
  {{ return({'status': 'ok', 'note': 'dropped ' ~ options.feature ~ '; features now '
      ~ after.tableFeatures | join(', ')}) }}
{% endmacro %}
