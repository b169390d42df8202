{#-
  Erase one data subject everywhere the project holds it (a right-to-erasure request), in one
  dbt invocation. The subject is declared once, in the project's vars:

    erasure_subjects:
      customer:
        key: customer_id                  # the column that names the subject
        references: [order_id]            # keys of what belongs to it (its orders)
        identifying: [email, full_name]   # columns that identify it without the key

  The tables are every Delta table of the project (sources, models, seeds, snapshots), or the
  tables of `schema` (and `pattern`). Each reference's values are collected from the tables
  that hold it beside the key (or an earlier reference), from the rows Delta reads and from
  every data file and change-data file directly, so rows deleted upstream but not vacuumed
  still count. A table loses the rows whose key or references match (then purge, and vacuum
  when asked, as `erase` does). A table with an identifying column but neither the key nor a
  reference is an error naming it, before anything is deleted.

  A dry run by default. After a real erasure, and alone with verify: true, a verification
  reads every data file and change-data file under each table's location (not through the
  Delta log) and reports where the subject's rows still are.
-#}
{% macro erase_subject(subject, value, dry_run=true, vacuum=false, retain_hours=none, unsafe_allow_short_retention=false, verify=false, schema=none, pattern=none) %}
  {%- do delta_ops._require_booleans('erase_subject', {'dry_run': dry_run, 'vacuum': vacuum,
      'unsafe_allow_short_retention': unsafe_allow_short_retention, 'verify': verify}) -%}
  {%- set declared = delta_ops._erasure_subject(subject) -%}
  {%- set key_literal = delta_ops._sql_literal(value, 'erase_subject value') -%}
  {%- if vacuum -%}{%- do delta_ops.get_vacuum_sql('`t`', retain_hours, false, false) -%}{%- endif -%}
  {%- set operation = 'erase_subject ' ~ subject -%}
  {%- set names = delta_ops._names_in_schema(operation, schema or target.schema, pattern or '*')
      if schema or pattern else delta_ops._project_table_names() -%}
  {%- set found = delta_ops._delta_tables(names | map('lower') | unique | sort) -%}

  {#-- Which subject columns each table holds; an identifying column alone is refused. --#}
  {%- set subject_columns = [declared.key] + declared.references -%}
  {%- set held = {} -%}
  {%- set refused = [] -%}
  {%- set selection = {'tables': [], 'skipped': found.skipped} -%}
  {%- for table in found.tables -%}
    {%- set columns = adapter.get_columns_in_relation(table.relation) | map(attribute='name') | map('lower') | list -%}
    {%- set columns_held = subject_columns | select('in', columns) | list -%}
    {%- set identifying = declared.identifying | select('in', columns) | list -%}
    {%- if identifying and not columns_held -%}
      {%- do refused.append(table.name ~ ' (' ~ identifying | join(', ') ~ ')') -%}
    {%- elif columns_held -%}
      {%- do held.update({table.name: {'columns': columns_held, 'identifying': identifying, 'positions': columns}}) -%}
      {%- do selection.tables.append(table) -%}
    {%- else -%}
      {%- do selection.skipped.append({'name': table.name, 'note': 'holds no column of ' ~ subject}) -%}
    {%- endif -%}
  {%- endfor -%}
  {%- if refused -%}
    {{ exceptions.raise_compiler_error(
        operation ~ ": " ~ refused | join('; ') ~ " identify the subject without " ~ subject_columns | join(' or ')
        ~ ", so nothing was deleted. Add the table's subject column to erasure_subjects." ~ subject
        ~ " (key or references) in the project's vars, or leave the column out of the table.") }}
  {%- endif -%}

  {#-- Follow the references: customer -> its orders -> ..., from rows and from files. --#}
  {%- set values = {declared.key: [key_literal]} -%}
  {%- for reference in declared.references -%}
    {%- set collected = [] -%}
    {%- for table in selection.tables if reference in held[table.name].columns -%}
      {%- set condition = delta_ops._subject_condition(held[table.name].columns | reject('equalto', reference), values) -%}
      {%- if condition -%}
        {%- for source in delta_ops._subject_sources(table) -%}
          {%- set read = delta_ops._read_subject_rows(table, source, 'to_json(collect_set(' ~ adapter.quote(reference) ~ '))', condition) -%}
          {%- if read.error -%}
            {{ exceptions.raise_compiler_error(operation ~ ": cannot read " ~ reference ~ " of " ~ table.name
                ~ " (" ~ source ~ "), so nothing was deleted: " ~ read.error) }}
          {%- endif -%}
          {%- for found_value in (fromjson(read.table.rows[0][0]) if read.table else []) -%}
            {%- do delta_ops._sql_literal(found_value, reference ~ ' of ' ~ table.name) -%}
            {%- do collected.append(found_value) -%}
          {%- endfor -%}
        {%- endfor -%}
      {%- endif -%}
    {%- endfor -%}
    {#- sorted as values (12 before 113; numbers, then strings), written as SQL literals -#}
    {%- set literals = [] -%}
    {%- for found_value in (collected | select('number') | unique | sort | list) + (collected | select('string') | unique | sort | list) -%}
      {%- do literals.append(delta_ops._sql_literal(found_value, reference)) -%}
    {%- endfor -%}
    {%- do values.update({reference: literals}) -%}
  {%- endfor -%}
  {%- set lines = [] -%}
  {%- for column in subject_columns -%}
    {%- do lines.append(column ~ ' ' ~ (values[column] | join(', ') if values[column] else '(none)')) -%}
  {%- endfor -%}
  {{ log(operation ~ ": the subject is " ~ lines | join('; '), info=True) }}

  {#-- Each table's condition, and the rows it matches now (all checked before any delete). --#}
  {%- set wheres = {} -%}
  {%- set matched = {} -%}
  {%- for table in selection.tables -%}
    {%- set condition = delta_ops._subject_condition(held[table.name].columns, values) or 'false' -%}
    {%- set counted = delta_ops._try_sql('select count(*) from ' ~ table.relation ~ ' where ' ~ condition) -%}
    {%- if counted.error -%}
      {{ exceptions.raise_compiler_error(operation ~ ": cannot count the subject's rows in " ~ table.name
          ~ ", so nothing was deleted: " ~ counted.error) }}
    {%- endif -%}
    {%- do wheres.update({table.name: condition}) -%}
    {%- do matched.update({table.name: counted.table.rows[0][0]}) -%}
  {%- endfor -%}
  {#-- The verification fails on the rows that must be gone: none in a dry run, the rows and
        current files after an erasure (older files wait for VACUUM), any with verify: true. --#}
  {%- set fail_on = ['visible', 'current', 'kept', 'change data'] if verify else ([] if dry_run else ['visible', 'current']) -%}
  {%- set options = {'wheres': wheres, 'matched': matched, 'held': held, 'dry_run': dry_run, 'purge': true,
      'erased': not (dry_run or verify),
      'vacuum': vacuum, 'retain_hours': retain_hours, 'unsafe': unsafe_allow_short_retention, 'fail_on': fail_on} -%}
  {%- set erased = [] -%}
  {%- if not verify -%}
    {%- set erased = delta_ops._run_for_each_table(operation ~ (' (dry run)' if dry_run else ''), selection, delta_ops._erase_table, options) -%}
  {%- endif -%}
  {%- set verified = delta_ops._run_for_each_table(operation ~ ' verify', selection, delta_ops._verify_subject_table, options) -%}
  {%- if dry_run and not verify -%}
    {{ log(operation ~ " (dry run): nothing was deleted. Pass dry_run: false to erase and purge"
        ~ (", and vacuum" if vacuum else ", vacuum: true to remove the old files") ~ ".", info=True) }}
    {{ return(erased) }}
  {%- endif -%}
  {{ return(verified) }}
{% endmacro %}


{#- One table's verification: the subject's rows as Delta reads them ('visible'), in the data
    files read directly (of the current version, hidden by deletion vectors: 'current'; the
    others, kept for time travel: 'kept'), and in change data; a row found in a place of
    options.fail_on fails it. -#}
{% macro _verify_subject_table(table, options) %}
  {%- set condition = options.wheres[table.name] -%}
  {%- set listed = delta_ops._try_sql('select distinct _metadata.file_path from ' ~ table.relation) -%}
  {%- if listed.error -%}{{ return(delta_ops._failed('cannot list the current files: ' ~ listed.error)) }}{%- endif -%}
  {%- set current_files = [] -%}
  {%- for row in listed.table.rows -%}{%- do current_files.append(row[0].split('/')[-1]) -%}{%- endfor -%}
  {#- the rows visible now: options.matched (counted before any delete) unless rows were deleted since -#}
  {%- set counted = delta_ops._try_sql('select count(*) from ' ~ table.relation ~ ' where ' ~ condition) if options.erased else none -%}
  {%- if counted and counted.error -%}{{ return(delta_ops._failed('cannot count the visible rows: ' ~ counted.error)) }}{%- endif -%}
  {%- set found = {'visible': counted.table.rows[0][0] if counted else options.matched[table.name],
      'current': 0, 'kept': 0, 'change data': 0} -%}
  {%- for source in delta_ops._subject_sources(table) if source != 'rows' -%}
    {%- set read = delta_ops._read_subject_rows(table, source, 'input_file_name(), count(*)', condition ~ ' group by 1') -%}
    {%- if read.error -%}{{ return(delta_ops._failed('cannot read the ' ~ source ~ ' directly: ' ~ read.error)) }}{%- endif -%}
    {%- for row in (read.table.rows if read.table else []) -%}
      {%- set where_found = source if source == 'change data' else ('current' if row[0].split('/')[-1] in current_files else 'kept') -%}
      {%- do found.update({where_found: found[where_found] + row[1]}) -%}
    {%- endfor -%}
  {%- endfor -%}
  {%- set note = 'rows visible ' ~ found.visible ~ ', in current files ' ~ found.current ~ ', in files kept for time travel '
      ~ found.kept ~ ', in change data ' ~ found['change data'] -%}
  {%- set stats = delta_ops._stats_columns(table, options.held[table.name]) -%}
  {%- if stats -%}
    {%- set note = note ~ '; the log\'s file statistics (min/max) may name ' ~ stats | join(', ') ~ ' until '
        ~ table.detail.properties.get('delta.logRetentionDuration', 'interval 30 days')
        ~ ' (delta.logRetentionDuration) removes old commits: delta.dataSkippingStatsColumns without them stops new ones' -%}
  {%- endif -%}
  {%- set failing = [] -%}
  {%- for place in options.fail_on if found[place] > 0 -%}{%- do failing.append(place) -%}{%- endfor -%}
  {%- if failing -%}
    {{ return(delta_ops._failed('the subject is still here: ' ~ note)) }}
  {%- endif -%}
  {{ return({'status': 'ok', 'note': note}) }}
{% endmacro %}


{#- The subject's declaration in vars.erasure_subjects, checked: {key, references, identifying}. -#}
{% macro _erasure_subject(subject) %}
  {%- set subjects = var('erasure_subjects', {}) -%}
  {%- set example = "vars: {erasure_subjects: {customer: {key: customer_id, references: [order_id], identifying: [email]}}}" -%}
  {%- if subjects is not mapping or subject not in subjects -%}
    {{ exceptions.raise_compiler_error(
        "erase_subject: no subject " ~ (subject | string | tojson) ~ " is declared ("
        ~ ((subjects | list | join(', ')) if subjects is mapping and subjects else 'none') ~ " are). Declare it in dbt_project.yml, e.g. "
        ~ example) }}
  {%- endif -%}
  {%- set declared = subjects[subject] -%}
  {%- if declared is not mapping or not declared.get('key') -%}
    {{ exceptions.raise_compiler_error("erase_subject: erasure_subjects." ~ subject ~ " needs a key column, e.g. " ~ example) }}
  {%- endif -%}
  {%- set subject_declaration = {'key': declared.key | lower,
      'references': delta_ops._as_list(declared.get('references'), 'erasure_subjects.' ~ subject ~ '.references') | map('lower') | list,
      'identifying': delta_ops._as_list(declared.get('identifying'), 'erasure_subjects.' ~ subject ~ '.identifying') | map('lower') | list} -%}
  {%- for column in [subject_declaration.key] + subject_declaration.references + subject_declaration.identifying -%}
    {%- do safe_identifier(column, 'erasure_subjects.' ~ subject ~ ' column') -%}
  {%- endfor -%}
  {{ return(subject_declaration) }}
{% endmacro %}


{#- 'schema.table' of every table the project writes or reads: its non-ephemeral models, seeds
    and snapshots, and its sources. -#}
{% macro _project_table_names() %}
  {%- set names = [] -%}
  {%- for node in graph.nodes.values() | list + graph.sources.values() | list
      if node.resource_type in ['model', 'seed', 'snapshot', 'source'] and node.config.materialized != 'ephemeral' -%}
    {%- do names.append(delta_ops._table_name_of(node)) -%}
  {%- endfor -%}
  {{ return(names) }}
{% endmacro %}


{#- `column in (values)` for each given column with values, joined by or; '' when none has. -#}
{% macro _subject_condition(columns, values) %}
  {%- set terms = [] -%}
  {%- for column in columns if values.get(column) -%}
    {%- do terms.append(adapter.quote(column) ~ ' in (' ~ values[column] | join(', ') ~ ')') -%}
  {%- endfor -%}
  {{ return('(' ~ terms | join(' or ') ~ ')' if terms else '') }}
{% endmacro %}


{#- A value as a SQL literal: a number as it is, a string quoted (quotes and backslashes
    escaped); anything else is an error naming `what`. -#}
{% macro _sql_literal(value, what) %}
  {%- if value is number and value is not boolean -%}
    {{ return(value | string) }}
  {%- elif value is string -%}
    {{ return("'" ~ value.replace('\\', '\\\\').replace("'", "\\'") ~ "'") }}
  {%- endif -%}
  {{ exceptions.raise_compiler_error(
      "Invalid " ~ what ~ " " ~ (value | string | tojson) ~ ": give the subject's key as a number or a string.") }}
{% endmacro %}


{#- Where a table's rows are read from: through Delta ('rows'), and, unless column mapping
    renames the columns in the files, every data file and change-data file directly. -#}
{% macro _subject_sources(table) %}
  {%- if table.detail.properties.get('delta.columnMapping.mode', 'none') != 'none' -%}
    {{ return(['rows']) }}
  {%- endif -%}
  {{ return(['rows', 'data files', 'change data']) }}
{% endmacro %}

{#- `select <columns> from <the source> where <condition>`: the table, or its parquet files
    read directly (a temporary view; deletion-vector files left out by name). A directory
    without parquet files (no change data yet, an empty table) is {'table': none}. -#}
{% macro _read_subject_rows(table, source, columns, condition) %}
  {%- if source == 'rows' -%}
    {{ return(delta_ops._try_sql('select ' ~ columns ~ ' from ' ~ table.relation ~ ' where ' ~ condition)) }}
  {%- endif -%}
  {%- set path = table.detail.location ~ ('/_change_data' if source == 'change data' else '') -%}
  {#- reading a Delta table's directory as parquet is what this is for: Delta's guard off -#}
  {%- set settings = {'spark.databricks.delta.formatCheck.enabled': 'false'} -%}
  {%- set created = delta_ops._try_sql('create or replace temporary view delta_ops_subject_files using parquet options (path '
      ~ delta_ops._sql_literal(path, 'location') ~ ", pathGlobFilter '*.parquet')", settings) -%}
  {%- if created.error -%}
    {{ return({'table': none} if modules.re.search('PATH_NOT_FOUND|UNABLE_TO_INFER_SCHEMA', created.error) else created) }}
  {%- endif -%}
  {%- set read = delta_ops._try_sql('select ' ~ columns ~ ' from delta_ops_subject_files where ' ~ condition, settings) -%}
  {%- do delta_ops._try_sql('drop view if exists delta_ops_subject_files') -%}
  {{ return(read) }}
{% endmacro %}


{#- The subject columns the table's file statistics cover (Delta's min/max per file): those in
    delta.dataSkippingStatsColumns, else the first delta.dataSkippingNumIndexedCols (32). -#}
{% macro _stats_columns(table, held) %}
  {%- set properties = table.detail.properties -%}
  {%- if properties.get('delta.dataSkippingStatsColumns') -%}
    {%- set indexed = properties['delta.dataSkippingStatsColumns'].split(',') | map('trim') | map('lower') | list -%}
    {{ return((held.columns + held.identifying) | select('in', indexed) | list) }}
  {%- endif -%}
  {%- set count = properties.get('delta.dataSkippingNumIndexedCols', '32') | int -%}
  {%- set covered = [] -%}
  {%- for column in held.columns + held.identifying if count < 0 or held.positions.index(column) < count -%}
    {%- do covered.append(column) -%}
  {%- endfor -%}
  {{ return(covered) }}
{% endmacro %}
