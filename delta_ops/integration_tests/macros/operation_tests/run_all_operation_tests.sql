{#-
  Every operation of delta_ops, run as a project runs them, on the tables `dbt build` made
  (target schema) and on tables of a scratch schema (<target schema>_ops, dropped first if an
  earlier run left it): each dry run first (the tables unchanged), then the real run, each
  checked on the tables (DESCRIBE HISTORY / DETAIL, SHOW TBLPROPERTIES, rows, files). One line
  per check (`operation tests: ok  ...`); the first mismatch stops the run with what was
  expected and what the tables hold.
  `cd delta_ops/integration_tests && dbt build && dbt run-operation run_all_operation_tests`
-#}
{% macro run_all_operation_tests() %}
  {%- set started = modules.datetime.datetime.now() -%}
  {%- set scratch = target.schema ~ '_ops' -%}
  {%- do run_query('drop schema if exists ' ~ adapter.quote(scratch) ~ ' cascade') -%}
  {%- set checks = [] -%}
  {%- set built = check_accounts_as_built(checks) -%}
  {%- do check_clone_operations(checks, scratch, built) -%}
  {%- do check_maintenance_operations(checks, scratch) -%}
  {%- do check_table_features(checks, scratch) -%}
  {%- do check_property_policy(checks) -%}
  {%- do check_restore(checks, scratch) -%}
  {%- do check_erase(checks, scratch) -%}
  {%- do check_erase_subject(checks, scratch) -%}
  {%- do check_diff_relations(checks, scratch, built) -%}
  {%- do check_drop_schema(checks, scratch) -%}
  {{ log("operation tests: all " ~ checks | length ~ " checks passed in "
      ~ '%.0f' | format((modules.datetime.datetime.now() - started).total_seconds()) ~ "s", info=True) }}
{% endmacro %}
