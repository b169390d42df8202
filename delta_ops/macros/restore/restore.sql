{#-
  Restore a Delta table to an earlier version or timestamp. A dry run by default: it prints the
  current and target versions, the history entries that would be undone and the row counts now
  and then. `confirm: true` restores (a new commit; the undone versions stay in the history).
-#}
{% macro restore(table, version=none, timestamp=none, confirm=false) %}
  {%- do delta_ops._require_sparkdelta('restore') -%}
  {%- if confirm is not boolean -%}
    {{ exceptions.raise_compiler_error(
        "Invalid restore confirm " ~ (confirm | string | tojson) ~ ": give true or false.") }}
  {%- endif -%}
  {%- set relation = delta_ops.relation_from_name(table, 'restore table') -%}
  {%- set sql = delta_ops.get_restore_sql(relation, version, timestamp) -%}
  {%- set as_of = delta_ops.relation_as_of(relation, version, timestamp) -%}
  {%- set detail = describe_detail(relation, raise_on_error=false) -%}
  {%- if detail.error or detail.format != 'delta' -%}
    {{ exceptions.raise_compiler_error("restore " ~ relation ~ ": not a Delta table ("
        ~ (detail.error or 'format ' ~ detail.format) ~ ").") }}
  {%- endif -%}
  {%- set entries = delta_ops._rows_as_dicts(run_query('describe history ' ~ relation)) -%}
  {%- set current = entries[0].version | int -%}
  {%- set oldest = entries[-1].version | int -%}
  {%- if version is not none -%}
    {%- set target_version = version | int -%}
    {%- if target_version > current or target_version < oldest -%}
      {{ exceptions.raise_compiler_error("restore " ~ relation ~ ": version " ~ target_version
          ~ " is not in its history (versions " ~ oldest ~ " to " ~ current ~ "); give one of them.") }}
    {%- endif -%}
  {%- else -%}
    {%- set at = delta_ops._as_datetime(timestamp) -%}
    {%- if at > delta_ops._as_datetime(entries[0].timestamp) -%}
      {{ exceptions.raise_compiler_error("restore " ~ relation ~ ": timestamp '" ~ timestamp
          ~ "' is after its latest commit (version " ~ current ~ " at " ~ entries[0].timestamp
          ~ "); the table is as it was then, there is nothing to restore.") }}
    {%- endif -%}
    {%- set older = [] -%}
    {%- for entry in entries if delta_ops._as_datetime(entry.timestamp) <= at -%}
      {%- do older.append(entry) -%}
    {%- endfor -%}
    {%- if not older -%}
      {{ exceptions.raise_compiler_error("restore " ~ relation ~ ": timestamp '" ~ timestamp
          ~ "' is before its oldest version in the history (version " ~ oldest ~ " at "
          ~ entries[-1].timestamp ~ "); give a later timestamp.") }}
    {%- endif -%}
    {%- set target_version = older[0].version | int -%}
  {%- endif -%}
  {%- if target_version == current -%}
    {{ log("restore " ~ relation ~ ": already at version " ~ current ~ "; nothing to restore.", info=True) }}
    {{ return({'status': 'ok', 'current_version': current, 'target_version': target_version}) }}
  {%- endif -%}
  {#- The filter makes Spark open the files: a bare count(*) is answered from the log. -#}
  {%- set then = delta_ops._try_sql('select count(*) as n from ' ~ as_of ~ " where _metadata.file_path != ''") -%}
  {%- if then.error -%}
    {{ exceptions.raise_compiler_error("restore " ~ relation ~ ": version " ~ target_version
        ~ " cannot be read, so it cannot be restored"
        ~ ("; its data files were removed by VACUUM: choose a version within the retention period"
           if modules.re.search('FILE_NOT_EXIST|FILE_NOT_FOUND|FileNotFound', then.error) else '')
        ~ ". (" ~ then.error ~ ")") }}
  {%- endif -%}
  {%- set now = run_query('select count(*) as n from ' ~ relation).rows[0][0] -%}
  {%- set undone = entries | selectattr('version', 'gt', target_version) | list -%}
  {{ log("restore " ~ relation ~ ": current version " ~ current ~ " (" ~ now ~ " rows), target version "
      ~ target_version ~ " (" ~ then.table.rows[0][0] ~ " rows); " ~ undone | length
      ~ " history entries would be undone:", info=True) }}
  {%- for entry in undone -%}
    {{ log("  v" ~ entry.version ~ "  " ~ entry.timestamp ~ "  " ~ entry.operation, info=True) }}
  {%- endfor -%}
  {%- if not confirm -%}
    {{ log("restore (dry run): nothing changed; pass confirm: true to run: " ~ sql, info=True) }}
    {{ return({'status': 'dry run', 'current_version': current, 'target_version': target_version}) }}
  {%- endif -%}
  {%- set result = delta_ops._try_sql(sql) -%}
  {%- if result.error -%}
    {{ exceptions.raise_compiler_error("restore " ~ relation ~ " to version " ~ target_version
        ~ " failed" ~ (": its data files were removed by VACUUM; choose a version within the "
        ~ "retention period" if 'Not all files' in result.error else '') ~ ". (" ~ result.error ~ ")") }}
  {%- endif -%}
  {{ log("restore " ~ relation ~ ": restored to version " ~ target_version ~ " as version "
      ~ (current + 1) ~ ".", info=True) }}
  {{ return({'status': 'ok', 'current_version': current, 'target_version': target_version}) }}
{% endmacro %}
