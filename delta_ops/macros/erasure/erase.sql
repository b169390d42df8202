{#-
  Erase a data subject (a right-to-erasure request) from the selected Delta tables, so that the
  bytes go away, not only the rows: DELETE the rows `where` matches, then (purge) REORG TABLE
  ... APPLY (PURGE) rewrites the files whose deletion vectors only hide them, then (vacuum)
  VACUUM removes the files no version needs any more, guarded as the `vacuum` operation is.
  Until that VACUUM runs past the table's delta.deletedFileRetentionDuration, the versions
  before the DELETE (time travel) and its change data (table_changes) still hold the rows:
  the report says which.

  A dry run by default: it counts the rows each table would lose. Every table is checked first
  (the condition must apply to each: a table without the column is an error naming it), and
  nothing is deleted anywhere unless every check passes.
-#}
{% macro erase(where, models=none, tags=none, schema=none, pattern=none, dry_run=true, purge=true, vacuum=false, retain_hours=none, unsafe_allow_short_retention=false) %}
  {%- do delta_ops._require_booleans('erase', {'dry_run': dry_run, 'purge': purge, 'vacuum': vacuum,
      'unsafe_allow_short_retention': unsafe_allow_short_retention}) -%}
  {%- do delta_ops.get_erase_sql('`t`', where) -%}
  {%- if vacuum -%}{%- do delta_ops.get_vacuum_sql('`t`', retain_hours, false, false) -%}{%- endif -%}
  {%- set selection = delta_ops._select_delta_tables('erase', models, tags, schema, pattern) -%}

  {#-- Check every table before touching any: the rows the condition matches. --#}
  {%- set matched = {} -%}
  {%- set refused = [] -%}
  {%- for table in selection.tables -%}
    {%- set counted = delta_ops._try_sql('select count(*) as matched from ' ~ table.relation ~ ' where (' ~ where ~ ')') -%}
    {%- if counted.error -%}
      {%- do refused.append(table.name ~ ': ' ~ counted.error) -%}
    {%- else -%}
      {%- do matched.update({table.name: counted.table.rows[0][0]}) -%}
    {%- endif -%}
  {%- endfor -%}
  {%- if refused -%}
    {{ exceptions.raise_compiler_error(
        "erase: the condition " ~ where ~ " does not apply to " ~ refused | length ~ " of "
        ~ selection.tables | length ~ " tables, so nothing was deleted: " ~ refused | join('; ')
        ~ ". Leave those tables out, or erase them in a call with their own condition.") }}
  {%- endif -%}

  {%- set wheres = {} -%}
  {%- for table in selection.tables -%}{%- do wheres.update({table.name: where}) -%}{%- endfor -%}
  {%- set options = {'wheres': wheres, 'matched': matched, 'dry_run': dry_run, 'purge': purge,
      'vacuum': vacuum, 'retain_hours': retain_hours, 'unsafe': unsafe_allow_short_retention} -%}
  {%- set results = delta_ops._run_for_each_table('erase' ~ (' (dry run)' if dry_run else ''), selection, delta_ops._erase_table, options) -%}
  {%- if dry_run -%}
    {{ log("erase (dry run): nothing was deleted. Pass dry_run: false to erase"
        ~ (", then purge: true rewrites the files" if purge else "")
        ~ (" and vacuum: true removes the old ones" if vacuum else "") ~ ".", info=True) }}
  {%- endif -%}
  {{ return(results) }}
{% endmacro %}

{#- One table's erasure: options.wheres and options.matched by table name, and the flags. -#}
{% macro _erase_table(table, options) %}
  {%- set rows = options.matched[table.name] -%}
  {%- if options.dry_run -%}
    {{ return({'status': 'dry run', 'note': 'would delete ' ~ rows ~ ' rows'}) }}
  {%- endif -%}
  {%- set notes = [] -%}
  {%- set erased_at = none -%}
  {#- the version the table's change-feed readers must have read before a vacuum -#}
  {%- set read_by_vacuum = delta_ops._last_commit(table.relation).version if options.vacuum else none -%}
  {%- if rows > 0 -%}
    {%- set deleted = delta_ops._try_sql(delta_ops.get_erase_sql(table.relation, options.wheres[table.name])) -%}
    {%- if deleted.error -%}{{ return(delta_ops._failed('delete: ' ~ deleted.error)) }}{%- endif -%}
    {%- set commit = delta_ops._last_commit(table.relation) -%}
    {%- set erased_at = commit.version -%}
    {%- do notes.append('deleted ' ~ commit.metrics.get('numDeletedRows', rows) ~ ' rows at version ' ~ erased_at) -%}
  {%- else -%}
    {%- do notes.append('no row matched') -%}
  {%- endif -%}
  {%- if options.purge -%}
    {%- set purged = delta_ops._reorg_purge_table(table, {}) -%}
    {%- if purged.status == 'failed' -%}{{ return(delta_ops._failed(notes | join('; ') ~ '; purge: ' ~ purged.note)) }}{%- endif -%}
    {%- do notes.append('purge: ' ~ purged.note) -%}
  {%- endif -%}
  {%- set behind = delta_ops._change_feed_readers_behind(table, erased_at or read_by_vacuum) if options.vacuum else [] -%}
  {%- if behind -%}
    {%- do notes.append('vacuum waits: ' ~ behind | join(', ') ~ ' must read the change data first (dbt build), then vacuum') -%}
  {%- elif options.vacuum -%}
    {%- set vacuumed = delta_ops._vacuum_table(table, {'retain_hours': options.retain_hours, 'dry_run': false,
        'lite': false, 'unsafe': options.unsafe}) -%}
    {%- if vacuumed.status == 'failed' -%}{{ return(delta_ops._failed(notes | join('; ') ~ '; vacuum ' ~ vacuumed.note)) }}{%- endif -%}
    {%- do notes.append('vacuum ' ~ vacuumed.note) -%}
  {%- endif -%}
  {%- if erased_at is not none -%}
    {%- set retention = table.detail.properties.get('delta.deletedFileRetentionDuration', 'interval 7 days') -%}
    {%- if options.vacuum and not behind -%}
      {%- do notes.append('versions before ' ~ erased_at ~ ' keep only files younger than the retention '
          ~ (options.retain_hours if options.retain_hours is not none else retention) ~ (' hours' if options.retain_hours is not none else '')) -%}
    {%- else -%}
      {%- do notes.append('versions before ' ~ erased_at ~ ' and the change data of ' ~ erased_at
          ~ ' still hold the rows until VACUUM runs past ' ~ retention) -%}
    {%- endif -%}
  {%- endif -%}
  {{ return({'status': 'ok', 'note': notes | join('; ')}) }}
{% endmacro %}

{#-
  The models of the project that read `table` through its change feed (incremental_strategy
  'cdf') and have not yet read it up to `version`, as 'model (read to N)'. A VACUUM now would
  remove the change data they still have to read (their next run would fail on a missing
  file), so the erasure's vacuum waits for the build that lets them read it. A reader not built
  yet, or whose table cannot say what it read (its next run asks for a full refresh, which
  reads no change data), does not hold the vacuum back.
-#}
{% macro _change_feed_readers_behind(table, version) %}
  {%- set key = table.relation.schema | lower ~ '.' ~ table.relation.identifier | lower -%}
  {%- set upstream_ids = [] -%}
  {%- for node in graph.nodes.values() | list + graph.sources.values() | list
      if delta_ops._table_name_of(node) | lower == key -%}
    {%- do upstream_ids.append(node.unique_id) -%}
  {%- endfor -%}
  {%- set behind = [] -%}
  {%- for node in graph.nodes.values() if version is not none and upstream_ids
      and node.config.get('incremental_strategy') == 'cdf' and upstream_ids | select('in', node.depends_on.nodes) | list -%}
    {%- set reader = delta_ops.relation_from_name(delta_ops._table_name_of(node)) -%}
    {%- if adapter.get_relation(database=reader.database, schema=reader.schema, identifier=reader.identifier) -%}
      {%- set state = adapter.cdf_watermark_or_error(node.name, reader) -%}
      {%- set read_to = (state.watermark or {}).get(key) -%}
      {%- if state.error -%}
        {{ log(node.name ~ " does not hold back the vacuum of " ~ table.name ~ ": " ~ state.error, info=True) }}
      {%- elif read_to is not none and read_to < version -%}
        {%- do behind.append(node.name ~ ' (read to ' ~ read_to ~ ')') -%}
      {%- endif -%}
    {%- endif -%}
  {%- endfor -%}
  {{ return(behind) }}
{% endmacro %}
