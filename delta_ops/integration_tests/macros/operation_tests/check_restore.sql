{#- restore undoes a DELETE on the clone of accounts: dry runs (by version and by the timestamp
    of the version) change nothing, `confirm: true` restores as a new commit. -#}
{% macro check_restore(checks, scratch) %}
  {%- set accounts = scratch ~ '.accounts' -%}
  {%- set rows = _count_rows(accounts) -%}
  {%- set cloned = _history_of(accounts)[-1] -%}
  {%- do run_query('delete from ' ~ delta_ops.relation_from_name(accounts) ~ ' where account_id = 3') -%}
  {%- set current = _history_of(accounts)[0].version -%}

  {%- set outcome = delta_ops.restore(table=accounts, version=cloned.version) -%}
  {%- do _expect(checks, outcome == {'status': 'dry run', 'current_version': current, 'target_version': cloned.version}
      and _history_of(accounts)[0].version == current and _count_rows(accounts) == rows - 1,
      "restore is a dry run until confirmed: still version " ~ current ~ ", " ~ (rows - 1) ~ " rows", outcome) -%}
  {%- set outcome = delta_ops.restore(table=accounts, timestamp=cloned.timestamp) -%}
  {%- do _expect(checks, outcome.status == 'dry run' and outcome.target_version == cloned.version
      and _history_of(accounts)[0].version == current,
      "restore by timestamp " ~ cloned.timestamp ~ " finds version " ~ cloned.version ~ " (dry run)", outcome) -%}

  {%- set outcome = delta_ops.restore(table=accounts, version=cloned.version, confirm=true) -%}
  {%- set last = _history_of(accounts)[0] -%}
  {%- set ids = run_query('select account_id from ' ~ delta_ops.relation_from_name(accounts) ~ ' order by 1').columns[0].values() | map('int') | list -%}
  {%- do _expect(checks, outcome.status == 'ok' and last.operation == 'RESTORE' and last.version == current + 1
      and last.parameters.get('version') | string == cloned.version | string and ids == [1, 3, 4],
      "restore confirm: version " ~ (current + 1) ~ " is a RESTORE of version " ~ cloned.version ~ ", accounts 1, 3, 4 back",
      last.operation ~ ' ' ~ last.parameters ~ ', accounts ' ~ ids) -%}
{% endmacro %}
