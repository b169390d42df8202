{#- erase_subject on scratch tables of a ledger: account 1 (subj_accounts, with its owner's
    name), its entries (subj_entries, entry 11 already deleted upstream: only its file still
    holds it) and their lines (subj_lines, keyed by entry_id alone), each with a change feed,
    the lines without deletion vectors (so a DELETE writes change-data files).
    The dry run finds the lines of both entries and touches nothing; the real run deletes and
    purges, and its verification finds the rows older versions and change data still hold; a
    writer that read before the erasure puts an entry back (as a build running meanwhile
    would), which a dry run finds; a second run deletes it again and vacuums (retain 0 hours),
    finding the entries from the kept files; account 2 stays; verify: true alone then finds
    nothing. -#}
{% macro check_erase_subject(checks, scratch) %}
  {%- set tables = {
      'subj_accounts': "account_id, owner_name from values (1, 'Ada'), (2, 'Bob') as t(account_id, owner_name)",
      'subj_entries': "entry_id, account_id from values (10, 1), (11, 1), (12, 2) as t(entry_id, account_id)",
      'subj_lines': "entry_id, amount from values (10, 5.0), (11, 7.5), (12, 1.0) as t(entry_id, amount)"} -%}
  {%- for name, rows in tables.items() -%}
    {%- do run_query('create table ' ~ delta_ops.relation_from_name(scratch ~ '.' ~ name) ~ " using delta tblproperties ("
        ~ "'delta.enableDeletionVectors' = '" ~ ((name != 'subj_lines') | string | lower) ~ "', 'delta.enableChangeDataFeed' = 'true') as select /*+ coalesce(1) */ " ~ rows) -%}
  {%- endfor -%}
  {%- do run_query('delete from ' ~ delta_ops.relation_from_name(scratch ~ '.subj_entries') ~ ' where entry_id = 11') -%}
  {%- set erasing = {'subject': 'account', 'value': 1, 'schema': scratch, 'pattern': 'subj_*'} -%}
  {%- set versions = {} -%}
  {%- for name in tables -%}{%- do versions.update({name: _history_of(scratch ~ '.' ~ name)[0].version}) -%}{%- endfor -%}

  {%- set results = delta_ops.erase_subject(**erasing) -%}
  {%- set notes = {} -%}
  {%- for result in results -%}{%- do notes.update({result.name.split('.')[-1]: result.note}) -%}{%- endfor -%}
  {%- set changed = [] -%}
  {%- for name in tables if _history_of(scratch ~ '.' ~ name)[0].version != versions[name] -%}{%- do changed.append(name) -%}{%- endfor -%}
  {%- do _expect(checks, notes == {'subj_accounts': 'would delete 1 rows', 'subj_entries': 'would delete 1 rows',
      'subj_lines': 'would delete 2 rows'} and not changed,
      "erase_subject is a dry run by default: it follows account 1 to entries 10 and 11 (11 only in a file) "
      ~ "and their lines, and commits nothing", notes ~ ', changed ' ~ changed) -%}

  {#-- without vacuum: the verification finds the rows in the files kept for time travel --#}
  {%- set results = delta_ops.erase_subject(dry_run=false, **erasing) -%}
  {%- set found = {} -%}
  {%- for result in results -%}{%- do found.update({result.name.split('.')[-1]: result.note.split(';')[0]}) -%}{%- endfor -%}
  {%- set kept = 'rows visible 0, in current files 0, in files kept for time travel ' -%}
  {%- do _expect(checks, found == {'subj_accounts': kept ~ '1, in change data 0', 'subj_entries': kept ~ '2, in change data 0',
      'subj_lines': kept ~ '2, in change data 2'} and results | map(attribute='status') | unique | list == ['ok'],
      "erase_subject without vacuum deletes and purges; its verification, reading the files directly, finds the rows "
      ~ "the older versions' files and the change data still hold", found) -%}

  {#-- a writer that read before the erasure commits after it (a build running meanwhile):
        entry 10 is back; a dry run finds it, and the next real run deletes it again --#}
  {%- do run_query('insert into ' ~ delta_ops.relation_from_name(scratch ~ '.subj_entries') ~ ' values (10, 1)') -%}
  {%- set notes = {} -%}
  {%- for result in delta_ops.erase_subject(**erasing) -%}{%- do notes.update({result.name.split('.')[-1]: result.note}) -%}{%- endfor -%}
  {%- do _expect(checks, notes == {'subj_accounts': 'would delete 0 rows', 'subj_entries': 'would delete 1 rows',
      'subj_lines': 'would delete 0 rows'},
      "erase_subject finds the subject's row a writer put back after the erasure (a build running during it)", notes) -%}
  {%- set reinserted_at = _history_of(scratch ~ '.subj_entries')[0].version -%}

  {#-- with vacuum (retain 0 hours): the entries are still found from the kept files, and go --#}
  {%- set results = delta_ops.erase_subject(dry_run=false, vacuum=true, retain_hours=0, unsafe_allow_short_retention=true, **erasing) -%}
  {%- set left = {} -%}
  {%- for name in tables -%}
    {%- set column = 'entry_id' if name == 'subj_lines' else 'account_id' -%}
    {%- set subject = 'entry_id in (10, 11)' if name == 'subj_lines' else 'account_id = 1' -%}
    {%- do left.update({name: [_count_rows(scratch ~ '.' ~ name, subject), _count_rows(scratch ~ '.' ~ name),
        _scalar('select count(*) from parquet.`' ~ _detail_of(scratch ~ '.' ~ name).location ~ '/*.parquet` where ' ~ subject) | int]}) -%}
  {%- endfor -%}
  {%- set clean = 'rows visible 0, in current files 0, in files kept for time travel 0, in change data 0' -%}
  {%- set verified = [] -%}
  {%- for result in results if result.status == 'ok' and result.note.startswith(clean) -%}{%- do verified.append(result.name) -%}{%- endfor -%}
  {%- set deletes = _history_of(scratch ~ '.subj_entries') | selectattr('version', 'gt', reinserted_at)
      | selectattr('operation', 'equalto', 'DELETE') | list -%}
  {%- do _expect(checks, left == {'subj_accounts': [0, 1, 0], 'subj_entries': [0, 1, 0], 'subj_lines': [0, 1, 0]}
      and verified | length == 3 and deletes | length == 1,
      "erase_subject with vacuum: it deletes the row put back, no data file of the three tables holds the subject, the other account's rows stay, "
      ~ "and the verification, reading the files directly, finds nothing",
      left ~ ' deletes after the insert ' ~ deletes | length ~ ' ' ~ results | map(attribute='note') | list) -%}

  {%- set results = delta_ops.erase_subject(verify=true, **erasing) -%}
  {%- do _expect(checks, results | map(attribute='status') | unique | list == ['ok'],
      "erase_subject verify: true finds the subject in no file of the three tables", results) -%}
{% endmacro %}
