{#-
  Rewrite the files of the selected Delta tables that carry deletion vectors, so soft-deleted
  rows are physically dropped (REORG TABLE ... APPLY (PURGE)). The old files stay until VACUUM.
-#}
{% macro reorg_purge(models=none, tags=none, schema=none, pattern=none) %}
  {%- set selection = delta_ops._select_delta_tables('reorg_purge', models, tags, schema, pattern) -%}
  {{ return(delta_ops._run_for_each_table('reorg_purge', selection, delta_ops._reorg_purge_table)) }}
{% endmacro %}

{% macro _reorg_purge_table(table, options) %}
  {%- set before = delta_ops._last_commit(table.relation).version -%}
  {%- set result = delta_ops._try_sql(delta_ops.get_reorg_purge_sql(table.relation)) -%}
  {%- if result.error -%}{{ return(delta_ops._failed(result.error)) }}{%- endif -%}
  {#- the statement's own metrics are a struct, nameless from the embedded session: the commit's
      (none when no file had a deletion vector to purge) -#}
  {%- set commit = delta_ops._last_commit(table.relation) -%}
  {%- set metrics = commit.metrics if commit.operation == 'REORG' and commit.version != before else {} -%}
  {{ return({'status': 'ok', 'note': 'files rewritten ' ~ metrics.get('numRemovedFiles', 0)
      ~ ' -> ' ~ metrics.get('numAddedFiles', 0)}) }}
{% endmacro %}
