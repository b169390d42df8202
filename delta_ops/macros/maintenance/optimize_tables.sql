{#-
  Compact the selected Delta tables: bin-packing, restricted to partitions with `where`,
  Z-ordered with `zorder_by`, or by the clustering columns for liquid-clustered tables.
  Reports files and bytes before and after. Not destructive: the old files stay until VACUUM.
-#}
{% macro optimize_tables(models=none, tags=none, schema=none, pattern=none, where=none, zorder_by=none) %}
  {#- Validate the arguments once, before any table is touched. -#}
  {%- do delta_ops.get_optimize_tables_sql('`t`', where, zorder_by) -%}
  {%- set selection = delta_ops._select_delta_tables('optimize_tables', models, tags, schema, pattern) -%}
  {{ return(delta_ops._run_for_each_table('optimize_tables', selection, delta_ops._optimize_table,
      {'where': where or {}, 'zorder_by': delta_ops._as_list(zorder_by, 'optimize zorder_by')})) }}
{% endmacro %}

{% macro _optimize_table(table, options) %}
  {%- set before = table.detail -%}
  {%- set partitions = before.partitionColumns | map('lower') | list -%}
  {%- set clustering = before.clusteringColumns -%}
  {%- if clustering and (options.where or options.zorder_by) -%}
    {{ return(delta_ops._failed("liquid-clustered by " ~ clustering | join(', ') ~ ": OPTIMIZE clusters by "
        ~ "those columns; drop where and zorder_by for this table")) }}
  {%- endif -%}
  {%- for column in options.where if column | lower not in partitions -%}
    {{ return(delta_ops._failed("where column " ~ column ~ " is not a partition column (partition "
        ~ "columns: " ~ (partitions | join(', ') or 'none') ~ "); OPTIMIZE filters on partitions only")) }}
  {%- endfor -%}
  {%- if options.zorder_by -%}
    {%- set columns = adapter.get_columns_in_relation(table.relation) | map(attribute='name') | map('lower') | list -%}
    {%- for column in options.zorder_by -%}
      {%- if column | lower not in columns -%}
        {{ return(delta_ops._failed("zorder_by column " ~ column ~ " is not a column of the table")) }}
      {%- elif column | lower in partitions -%}
        {{ return(delta_ops._failed("zorder_by column " ~ column ~ " is a partition column; Z-order other columns")) }}
      {%- endif -%}
    {%- endfor -%}
  {%- endif -%}
  {%- set result = delta_ops._try_sql(delta_ops.get_optimize_tables_sql(table.relation, options.where, options.zorder_by)) -%}
  {%- if result.error -%}{{ return(delta_ops._failed(result.error)) }}{%- endif -%}
  {%- set after = describe_detail(table.relation, raise_on_error=false) -%}
  {{ return({'status': 'ok', 'note': ('clustered, ' if clustering else '')
      ~ 'files ' ~ before.numFiles ~ ' -> ' ~ after.numFiles
      ~ ', bytes ' ~ before.sizeInBytes ~ ' -> ' ~ after.sizeInBytes}) }}
{% endmacro %}
