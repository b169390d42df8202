{#- The version `dbt build` wrote accounts at (before its post-hooks), found in its history;
    the checks count from it, so they hold after any number of builds. -#}
{% macro check_accounts_as_built(checks) %}
  {%- set name = target.schema ~ '.accounts' -%}
  {%- set builds = _history_of(name) | selectattr('operation', 'equalto', 'CREATE OR REPLACE TABLE AS SELECT') | list -%}
  {%- do _expect(checks, builds | length > 0, "accounts was built by dbt (CREATE OR REPLACE TABLE AS SELECT in its history)") -%}
  {%- set built = builds[0].version -%}
  {%- set after = _history_of(name) | selectattr('version', 'gt', built) | map(attribute='operation') | list -%}
  {%- do _expect(checks, after[-3:] == ['DELETE', 'UPDATE', 'WRITE'],
      "accounts' post-hooks committed after its build (WRITE, UPDATE, DELETE)", after | reverse | list) -%}
  {{ return(built) }}
{% endmacro %}
