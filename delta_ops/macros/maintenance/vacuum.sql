{#-
  Remove files no longer referenced by the selected Delta tables. A dry run by default: it
  lists how many files (and bytes) would go. It refuses a retention shorter than the table's
  delta.deletedFileRetentionDuration (default 7 days) unless unsafe_allow_short_retention is
  true: those files are still needed for time travel and by readers or writers in flight.
  `lite: true` uses the Delta log instead of listing the directory (Delta 4.0+).
-#}
{% macro vacuum(models=none, tags=none, schema=none, pattern=none, retain_hours=none, dry_run=true, lite=false, unsafe_allow_short_retention=false) %}
  {%- do delta_ops._require_booleans('vacuum', {'dry_run': dry_run, 'lite': lite,
      'unsafe_allow_short_retention': unsafe_allow_short_retention}) -%}
  {%- do delta_ops.get_vacuum_sql('`t`', retain_hours, lite, dry_run) -%}
  {%- set selection = delta_ops._select_delta_tables('vacuum', models, tags, schema, pattern) -%}
  {{ return(delta_ops._run_for_each_table('vacuum' ~ (' (dry run)' if dry_run else ''), selection, delta_ops._vacuum_table,
      {'retain_hours': retain_hours, 'dry_run': dry_run, 'lite': lite,
       'unsafe': unsafe_allow_short_retention})) }}
{% endmacro %}

{% macro _vacuum_table(table, options) %}
  {%- set interval = table.detail.properties.get('delta.deletedFileRetentionDuration', 'interval 7 days') -%}
  {%- set minimum = delta_ops._interval_hours(interval) -%}
  {%- if minimum is none -%}
    {{ return(delta_ops._failed("cannot read delta.deletedFileRetentionDuration = " ~ interval)) }}
  {%- endif -%}
  {%- set short = options.retain_hours is not none and options.retain_hours < minimum -%}
  {%- if short and not options.unsafe -%}
    {{ return(delta_ops._failed("refused: retain_hours " ~ options.retain_hours ~ " is below the table's "
        ~ "delta.deletedFileRetentionDuration (" ~ interval ~ " = " ~ minimum ~ " hours); files "
        ~ "younger than that may still be read by time travel or by a writer in flight. Pass "
        ~ "unsafe_allow_short_retention: true only when no one reads or writes the table")) }}
  {%- endif -%}
  {%- set sql = delta_ops.get_vacuum_sql(table.relation, options.retain_hours, options.lite, options.dry_run) -%}
  {#- Delta's own guard against short retention, off for this statement only. -#}
  {%- set result = delta_ops._try_sql(sql, {'spark.databricks.delta.retentionDurationCheck.enabled': 'false'} if short else {}) -%}
  {%- if result.error -%}{{ return(delta_ops._failed(result.error)) }}{%- endif -%}
  {%- if not options.dry_run -%}
    {%- set metrics = delta_ops._last_commit(table.relation).metrics -%}
    {{ return({'status': 'ok', 'note': 'deleted ' ~ metrics.get('numDeletedFiles', '?') ~ ' files'
        ~ (' (lite)' if options.lite else '')}) }}
  {%- endif -%}
  {%- set paths = result.table.columns['path'].values() | list -%}
  {{ return({'status': 'dry run', 'note': 'would delete ' ~ paths | length ~ ' files'
      ~ delta_ops._vacuum_bytes(table.detail.location, paths) ~ (' (lite)' if options.lite else '')}) }}
{% endmacro %}

{#- ", N bytes" of the files a dry run lists, read through Spark's binaryFile source. -#}
{% macro _vacuum_bytes(location, paths) %}
  {%- if not paths -%}{{ return(', 0 bytes') }}{%- endif -%}
  {%- if '`' in location -%}{{ return(' (bytes unknown: unusual location)') }}{%- endif -%}
  {%- set literals = [] -%}
  {%- for path in paths -%}{%- do literals.append(sql_string(path)) -%}{%- endfor -%}
  {%- set result = delta_ops._try_sql('select sum(length) as bytes from binaryFile.`' ~ location
      ~ '` where path in (' ~ literals | join(', ') ~ ')') -%}
  {%- if result.error -%}{{ return(' (bytes unknown: ' ~ result.error ~ ')') }}{%- endif -%}
  {{ return(', ' ~ (result.table.rows[0][0] or 0) ~ ' bytes') }}
{% endmacro %}
