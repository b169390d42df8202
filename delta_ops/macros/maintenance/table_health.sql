{#-
  A health report per selected Delta table: files, bytes, average file size, share of small
  files (below small_file_mb), share of files with deletion vectors, protocol versions and
  features, and the last OPTIMIZE and VACUUM with their times.
  File-level figures come from the table's JSON commit files (_delta_log/*.json); when the log
  has been cleaned up past a checkpoint they are incomplete, and the report says so.
-#}
{% macro table_health(models=none, tags=none, schema=none, pattern=none, small_file_mb=32) %}
  {%- if small_file_mb is not number or small_file_mb is boolean or small_file_mb <= 0 -%}
    {{ exceptions.raise_compiler_error(
        "Invalid table_health small_file_mb " ~ (small_file_mb | string | tojson) ~ ": give a number > 0.") }}
  {%- endif -%}
  {%- set selection = delta_ops._select_delta_tables('table_health', models, tags, schema, pattern) -%}
  {{ return(delta_ops._run_for_each_table('table_health', selection, delta_ops._table_health_table,
      {'small_bytes': (small_file_mb * 1024 * 1024) | int})) }}
{% endmacro %}

{% macro _table_health_table(table, options) %}
  {%- set detail = table.detail -%}
  {%- if '`' in detail.location -%}{{ return(delta_ops._failed('unusual location ' ~ detail.location)) }}{%- endif -%}
  {%- set files = delta_ops._try_sql(delta_ops.get_table_files_sql(detail.location, options.small_bytes)) -%}
  {%- if files.error -%}{{ return(delta_ops._failed(files.error)) }}{%- endif -%}
  {%- set f = delta_ops._rows_as_dicts(files.table)[0] -%}
  {%- set history = delta_ops._try_sql('describe history ' ~ table.relation) -%}
  {%- if history.error -%}{{ return(delta_ops._failed(history.error)) }}{%- endif -%}
  {%- set last = {} -%}
  {%- for entry in delta_ops._rows_as_dicts(history.table) -%}
    {%- set kind = 'optimize' if entry.operation == 'OPTIMIZE' else ('vacuum' if entry.operation == 'VACUUM END' else none) -%}
    {%- if kind and kind not in last -%}
      {%- do last.update({kind: 'v' ~ entry.version ~ ' at ' ~ entry.timestamp}) -%}
    {%- endif -%}
  {%- endfor -%}
  {%- set count = detail.numFiles or 0 -%}
  {%- set report = [
      ('files', count),
      ('bytes', detail.sizeInBytes),
      ('average file bytes', ((detail.sizeInBytes or 0) / count) | int if count else 0),
      ('small-file share', '%.0f%%' | format(100 * f.small_files / count) if count else 'n/a'),
      ('deletion-vector share', '%.0f%%' | format(100 * f.dv_files / count) if count else 'n/a'),
      ('protocol', 'reader ' ~ detail.minReaderVersion ~ ', writer ' ~ detail.minWriterVersion),
      ('features', detail.tableFeatures | join(', ')),
      ('last OPTIMIZE', last.get('optimize', 'never')),
      ('last VACUUM', last.get('vacuum', 'never')),
  ] -%}
  {%- for key, value in report -%}
    {{ log("  " ~ key ~ ": " ~ value, info=True) }}
  {%- endfor -%}
  {%- set complete = f.files == count -%}
  {%- if not complete -%}
    {{ log("  note: the JSON commits list " ~ f.files ~ " live files, DESCRIBE DETAIL " ~ count
        ~ "; the log was cleaned up, so the small-file and deletion-vector shares are unknown", info=True) }}
  {%- endif -%}
  {{ return({'status': 'ok', 'note': count ~ ' files, ' ~ detail.sizeInBytes ~ ' bytes, '
      ~ (('small ' ~ f.small_files ~ ', with DV ' ~ f.dv_files) if complete else 'log incomplete')
      ~ ', last OPTIMIZE ' ~ last.get('optimize', 'never') ~ ', last VACUUM ' ~ last.get('vacuum', 'never')}) }}
{% endmacro %}
