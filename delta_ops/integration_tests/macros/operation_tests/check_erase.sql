{#- erase a data subject (account 1) from two scratch tables, one with deletion vectors: a dry
    run counts and changes nothing; the real run deletes, purges and vacuums (retain 0 hours),
    so no data file in either table's directory holds the subject any more. -#}
{% macro check_erase(checks, scratch) %}
  {%- set tables = [scratch ~ '.erase_with_dv', scratch ~ '.erase_plain'] -%}
  {%- for name in tables -%}
    {%- do run_query('create table ' ~ delta_ops.relation_from_name(name) ~ " using delta tblproperties ('delta.enableDeletionVectors' = '"
        ~ ('true' if name.endswith('_dv') else 'false') ~ "') as select /*+ coalesce(1) */ * from " ~ delta_ops.relation_from_name(target.schema ~ '.accounts')) -%}
  {%- endfor -%}
  {%- set selected = {'where': 'account_id = 1', 'schema': scratch, 'pattern': 'erase_*'} -%}
  {%- set versions = {} -%}
  {%- for name in tables -%}
    {%- do versions.update({name: _history_of(name)[0].version}) -%}
    {%- do _expect(checks, _subject_in_files(name) == 1, name ~ ": account 1 is in its data files") -%}
  {%- endfor -%}

  {%- set results = delta_ops.erase(**selected) -%}
  {%- for name in tables -%}
    {%- set result = results | selectattr('name', 'equalto', name) | first -%}
    {%- do _expect(checks, result.status == 'dry run' and result.note == 'would delete 1 rows'
        and _history_of(name)[0].version == versions[name] and _count_rows(name, 'account_id = 1') == 1,
        "erase is a dry run by default: " ~ name ~ " would lose 1 row, keeps it, commits nothing", result) -%}
  {%- endfor -%}

  {%- set results = delta_ops.erase(dry_run=false, vacuum=true, retain_hours=0, unsafe_allow_short_retention=true, **selected) -%}
  {%- for name in tables -%}
    {%- set operations = _history_of(name) | selectattr('version', 'gt', versions[name]) | map(attribute='operation') | reverse | list -%}
    {%- set before = adapter.try_execute('select count(*) from ' ~ delta_ops.relation_from_name(name) ~ ' version as of ' ~ versions[name]
        ~ " where _metadata.file_path != ''") -%}
    {#- unreadable because its files are gone, not for any other error (a typo in the query) -#}
    {%- set files_gone = before.error and modules.re.search('(?i)FileNotFound|FAILED_READ_FILE|does not exist', before.error) -%}
    {%- do _expect(checks, _count_rows(name, 'account_id = 1') == 0 and _count_rows(name) == 2
        and operations[0] == 'DELETE' and operations[-2:] == ['VACUUM START', 'VACUUM END']
        and _subject_in_files(name) == 0 and files_gone,
        "erase: account 1 deleted from " ~ name ~ " (2 rows left), purged and vacuumed: no data file holds it, "
        ~ "the version before cannot be read: its files are gone", operations ~ ', in files ' ~ _subject_in_files(name)
        ~ ', version ' ~ versions[name] ~ ' ' ~ (before.error or 'readable')) -%}
  {%- endfor -%}
{% endmacro %}

{#- Rows of account 1 in every parquet file of the table's directory, referenced or not (a
    row hidden by a deletion vector is still in its file). -#}
{% macro _subject_in_files(name) %}
  {{ return(_scalar('select count(*) from parquet.`' ~ _detail_of(name).location ~ '/*.parquet` where account_id = 1') | int) }}
{% endmacro %}
