{#- diff_relations of accounts with itself as dbt built it (the post-hooks' changes, counted
    and sampled; the key from its unique test), and of the restored clone with accounts with
    fail_on_diff (identical, so it passes). fail_on_diff on relations that differ fails the
    command: `dbt run-operation diff_relations --args '{a: accounts, b: raw_accounts, fail_on_diff: true}'`. -#}
{% macro check_diff_relations(checks, scratch, built) %}
  {%- set r = delta_ops.diff_relations(a='accounts', version=built) -%}
  {%- set sampled = [r.samples.only_in_a | map(attribute='key') | list, r.samples.only_in_b | map(attribute='key') | list,
      r.samples.changed | list] -%}
  {%- do _expect(checks, r.key == ['account_id'] and [r.rows_a, r.rows_b, r.only_in_a, r.only_in_b, r.changed, r.unchanged] == [3, 3, 1, 1, 1, 1]
      and r.column_changes == {'owner': 0, 'balance': 1} and r.differs
      and sampled == [[{'account_id': 4}], [{'account_id': 2}], [{'key': {'account_id': 1}, 'columns': ['balance']}]],
      "diff_relations accounts with its version " ~ built ~ ": key account_id (its unique test); account 4 only now, "
      ~ "2 only then, 1 changed (balance), 3 unchanged", r) -%}
  {%- set r = delta_ops.diff_relations(a=scratch ~ '.accounts', b=target.schema ~ '.accounts', fail_on_diff=true) -%}
  {%- do _expect(checks, not r.differs and r.unchanged == 3 and r.rows_a == 3 and r.rows_b == 3,
      "diff_relations with fail_on_diff: the restored clone and accounts are identical (3 rows), so it passes", r) -%}
{% endmacro %}
