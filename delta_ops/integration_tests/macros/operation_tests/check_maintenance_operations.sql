{#-
  On scratch tables made here: optimize_tables (a partition with `where`, then Z-ordered),
  vacuum (a dry run by default, then VACUUM LITE), reorg_purge (deletion vectors rewritten),
  and the reports history, detail and table_health (which change nothing and agree with
  DESCRIBE HISTORY / DETAIL).
-#}
{% macro check_maintenance_operations(checks, scratch) %}
  {%- set events = scratch ~ '.events' -%}
  {%- set selected = {'schema': scratch, 'pattern': 'events'} -%}
  {%- do run_query('create table ' ~ delta_ops.relation_from_name(events) ~ ' (id int, p string) using delta partitioned by (p)') -%}
  {%- for batch in range(3) -%}
    {%- do run_query('insert into ' ~ delta_ops.relation_from_name(events) ~ ' values (' ~ batch ~ ", 'a'), (" ~ (batch + 10) ~ ", 'b')") -%}
  {%- endfor -%}
  {%- do _expect(checks, _detail_of(events).numFiles == 6, "events: 3 inserts wrote 6 small files (2 partitions)") -%}

  {#-- optimize_tables --#}
  {%- do delta_ops.optimize_tables(where={'p': 'a'}, **selected) -%}
  {%- set last = _history_of(events)[0] -%}
  {%- do _expect(checks, last.operation == 'OPTIMIZE' and "p IN (a)" in last.parameters.predicate | string
      and _detail_of(events).numFiles == 4 and _count_rows(events) == 6,
      "optimize_tables where p = a: partition a compacted (6 -> 4 files), b untouched, 6 rows",
      last.operation ~ ' ' ~ last.parameters ~ ', files ' ~ _detail_of(events).numFiles) -%}
  {%- do delta_ops.optimize_tables(zorder_by=['id'], **selected) -%}
  {%- set last = _history_of(events)[0] -%}
  {%- do _expect(checks, last.operation == 'OPTIMIZE' and 'id' in last.parameters.zOrderBy | string
      and _detail_of(events).numFiles == 2 and _count_rows(events) == 6,
      "optimize_tables zorder_by id: one file per partition (4 -> 2), Z-ordered by id, 6 rows",
      last.operation ~ ' ' ~ last.parameters ~ ', files ' ~ _detail_of(events).numFiles) -%}

  {#-- vacuum: dry run by default, then LITE --#}
  {%- set on_disk = _files_on_disk(events) -%}
  {%- set version = _history_of(events)[0].version -%}
  {%- set results = delta_ops.vacuum(retain_hours=0, unsafe_allow_short_retention=true, **selected) -%}
  {%- do _expect(checks, results[0].status == 'dry run' and results[0].note.startswith('would delete ' ~ (on_disk - 2) ~ ' files')
      and _files_on_disk(events) == on_disk and _history_of(events)[0].version == version
      and _count_rows(events, as_of=' version as of 1') == 2,
      "vacuum is a dry run by default: it lists the " ~ (on_disk - 2) ~ " files no version needs, deletes none, commits nothing",
      results[0].note ~ ', on disk ' ~ _files_on_disk(events)) -%}
  {%- do delta_ops.vacuum(retain_hours=0, unsafe_allow_short_retention=true, lite=true, dry_run=false, **selected) -%}
  {%- set entries = _history_of(events) -%}
  {%- set version_1 = adapter.try_execute('select count(*) from ' ~ delta_ops.relation_from_name(events)
      ~ " version as of 1 where _metadata.file_path != ''") -%}
  {%- do _expect(checks, entries[0].operation == 'VACUUM END' and entries[1].operation == 'VACUUM START'
      and entries[1].parameters.get('vacuumType', 'LITE') == 'LITE'
      and _files_on_disk(events) == 2 and _count_rows(events) == 6 and version_1.error,
      "vacuum lite (retain 0 hours): only the 2 live files stay; version 1 cannot be read any more",
      entries[0].operation ~ ' ' ~ entries[1].parameters ~ ', on disk ' ~ _files_on_disk(events)
      ~ ', version 1 ' ~ (version_1.error or 'readable')) -%}

  {#-- reorg_purge --#}
  {%- set dv = scratch ~ '.dv_people' -%}
  {%- do run_query('create table ' ~ delta_ops.relation_from_name(dv) ~ " using delta tblproperties ('delta.enableDeletionVectors' = 'true') as select /*+ coalesce(1) */ * from "
      ~ delta_ops.relation_from_name(target.schema ~ '.people')) -%}
  {%- do run_query('delete from ' ~ delta_ops.relation_from_name(dv) ~ ' where id = 2') -%}
  {%- set files_sql = delta_ops.get_table_files_sql(_detail_of(dv).location, 1) -%}
  {%- set dv_files = run_query(files_sql).columns['dv_files'].values()[0] | int -%}
  {%- do _expect(checks, dv_files > 0, "dv_people: a DELETE left " ~ dv_files ~ " file(s) with a deletion vector", dv_files) -%}
  {%- do delta_ops.reorg_purge(schema=scratch, pattern='dv_people') -%}
  {%- set dv_files = run_query(files_sql).columns['dv_files'].values()[0] | int -%}
  {%- do _expect(checks, _history_of(dv)[0].operation == 'REORG' and dv_files == 0 and _count_rows(dv) == 2,
      "reorg_purge rewrote the files with deletion vectors (none left), 2 rows", _history_of(dv)[0].operation ~ ', DV files ' ~ dv_files) -%}

  {#-- the reports: nothing changes, and they say what DESCRIBE HISTORY / DETAIL say --#}
  {%- set version = _history_of(events)[0].version -%}
  {%- set results = delta_ops.history(limit=3, **selected) -%}
  {%- do _expect(checks, results | length == 1 and results[0].note == '3 entries shown' and _history_of(events)[0].version == version,
      "history limit 3 showed 3 entries of events, committed nothing", results) -%}
  {%- set detail = _detail_of(events) -%}
  {%- set results = delta_ops.detail(**selected) -%}
  {%- do _expect(checks, results[0].note == detail.numFiles ~ ' files, ' ~ detail.sizeInBytes ~ ' bytes'
      and _history_of(events)[0].version == version,
      "detail reported events' " ~ detail.numFiles ~ " files and " ~ detail.sizeInBytes ~ " bytes, committed nothing", results) -%}
  {%- set entries = _history_of(events) -%}
  {%- set optimized = entries | selectattr('operation', 'equalto', 'OPTIMIZE') | first -%}
  {%- set vacuumed = entries | selectattr('operation', 'equalto', 'VACUUM END') | first -%}
  {%- set results = delta_ops.table_health(schema=scratch, pattern='*') -%}
  {%- set health = results | selectattr('name', 'equalto', events) | first -%}
  {%- set dv_health = results | selectattr('name', 'equalto', dv) | first -%}
  {%- do _expect(checks, results | length == run_query('show tables in ' ~ adapter.quote(scratch)).rows | length
      and results | rejectattr('status', 'equalto', 'ok') | list | length == 0
      and health.note.startswith('2 files, ' ~ detail.sizeInBytes ~ ' bytes, small 2, with DV 0')
      and ('last OPTIMIZE v' ~ optimized.version ~ ' at') in health.note and ('last VACUUM v' ~ vacuumed.version ~ ' at') in health.note
      and 'with DV 0' in dv_health.note and _history_of(events)[0].version == version,
      "table_health covered every table of " ~ scratch ~ "; for events: 2 files, all small, no DV, last OPTIMIZE v"
      ~ optimized.version ~ ", last VACUUM v" ~ vacuumed.version, health) -%}
{% endmacro %}
