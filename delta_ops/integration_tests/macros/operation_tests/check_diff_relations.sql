{#- diff_relations of accounts as dbt built it (before) with accounts now (after: the post-hooks'
    changes, counted, broken down per column, totalled and sampled with before and after values;
    the key from its unique test); of the build with the next version (version_b: the insert
    alone); the rows that differ saved to a table of the scratch schema (and refused in
    accounts' own schema); a relation that does not exist yet against accounts (a new model:
    summarised); and of the restored clone with accounts with fail_on_diff (identical, so it
    passes). fail_on_diff on relations that differ fails the command:
    `dbt run-operation diff_relations --args '{a: accounts, b: raw_accounts, fail_on_diff: true}'`. -#}
{% macro check_diff_relations(checks, scratch, built) %}
  {%- set saved = scratch ~ '.accounts_diff' -%}
  {%- set r = delta_ops.diff_relations(a='accounts', version=built, save_to=saved) -%}
  {%- set sampled = [r.samples.removed | map(attribute='key') | list, r.samples.added | map(attribute='key') | list,
      r.samples.changed | list] -%}
  {%- do _expect(checks, r.key == ['account_id'] and [r.rows_a, r.rows_b, r.removed, r.added, r.changed, r.unchanged] == [3, 3, 1, 1, 1, 1]
      and r.column_changes == {'owner': 0, 'balance': 1} and r.differs
      and r.summary == 'data differs: 1 removed, 1 added, 1 changed'
      and sampled == [[{'account_id': 2}], [{'account_id': 4}],
          [{'key': {'account_id': 1}, 'columns': ['balance'], 'values': [{'column': 'balance', 'a': '100', 'b': '105'}]}]],
      "diff_relations of accounts' version " ~ built ~ " (before) with accounts now (after): key account_id (its "
      ~ "unique test); account 2 removed, 4 added, 1 changed (balance 100 -> 105), 3 unchanged", r) -%}
  {%- do _expect(checks, r.column_stats.balance == {'changed': 1, 'share': 50.0, 'match': 1, 'both_null': 0, 'one_null': 0, 'differ': 1}
      and r.column_stats.owner.match == 2 and r.totals.balance == {'a': '600', 'b': '805', 'difference': '205'},
      "diff_relations per column (balance: 1 of the 2 rows in both changed, 50%; owner: 2 match) and the totals "
      ~ "of balance (600 before, 805 after)", r) -%}
  {%- set rows = run_query("select account_id, _diff_kind, concat('[', array_join(_diff_columns, ','), ']') as changed_columns, balance__a, balance__b from "
      ~ saved ~ " order by account_id") -%}
  {%- set found = [] -%}
  {%- for row in rows.rows -%}
    {%- do found.append([row[0] | int, row[1], row[2], none if row[3] is none else row[3] | int,
        none if row[4] is none else row[4] | int]) -%}
  {%- endfor -%}
  {%- do _expect(checks, r.saved_to == saved and found == [[1, 'changed', '[balance]', 100, 105],
      [2, 'removed', '[]', 200, none], [4, 'added', '[]', none, 400]],
      "diff_relations save_to " ~ saved ~ ": the 3 rows that differ with their kind and both balances", found) -%}
  {%- set r = delta_ops.diff_relations(a='accounts', version=built, version_b=built + 1) -%}
  {%- do _expect(checks, [r.removed, r.added, r.changed, r.unchanged] == [0, 1, 0, 3]
      and r.b.endswith('version as of ' ~ (built + 1)),
      "diff_relations of version " ~ built ~ " with version " ~ (built + 1) ~ " of accounts: the insert of account 4 alone", r) -%}
  {%- set r = delta_ops.diff_relations(a=scratch ~ '.accounts_next', b='accounts') -%}
  {%- do _expect(checks, r.new_relation and r.rows_b == 3 and r.key == ['account_id'] and r.key_unique
      and r.columns_added == ['account_id', 'owner', 'balance'],
      "diff_relations of a relation that does not exist with accounts: a new relation of 3 rows, 3 columns, "
      ~ "key account_id unique", r) -%}
  {%- set r = delta_ops.diff_relations(a=scratch ~ '.accounts', b=target.schema ~ '.accounts', fail_on_diff=true) -%}
  {%- do _expect(checks, not r.differs and r.unchanged == 3 and r.rows_a == 3 and r.rows_b == 3,
      "diff_relations with fail_on_diff: the restored clone and accounts are identical (3 rows), so it passes", r) -%}
{% endmacro %}
