{#- apply_property_policy on the model accounts, after its property and its constraint drifted
    away from its config: a dry run changes nothing, the real run puts both back, a second run
    finds nothing to do. -#}
{% macro check_property_policy(checks) %}
  {%- set accounts = target.schema ~ '.accounts' -%}
  {%- set constraint = 'delta.constraints.balance_not_negative' -%}
  {%- set built = _properties_of(accounts) -%}
  {%- do _expect(checks, built.get('delta_ops_it.owner') == 'finance' and constraint in built,
      "accounts as built: delta_ops_it.owner = finance and the check constraint balance_not_negative", built) -%}
  {%- do run_query('alter table ' ~ delta_ops.relation_from_name(accounts) ~ " set tblproperties ('delta_ops_it.owner' = 'drifted')") -%}
  {%- do run_query('alter table ' ~ delta_ops.relation_from_name(accounts) ~ ' drop constraint balance_not_negative') -%}
  {%- set version = _history_of(accounts)[0].version -%}

  {%- set results = delta_ops.apply_property_policy(models=['accounts']) -%}
  {%- set now = _properties_of(accounts) -%}
  {%- do _expect(checks, results[0].status == 'dry run' and now.get('delta_ops_it.owner') == 'drifted'
      and constraint not in now and _history_of(accounts)[0].version == version,
      "apply_property_policy is a dry run by default: the drift stays, nothing committed", results) -%}
  {%- do delta_ops.apply_property_policy(models=['accounts'], dry_run=false) -%}
  {%- set now = _properties_of(accounts) -%}
  {%- do _expect(checks, now.get('delta_ops_it.owner') == 'finance' and now.get(constraint) == built[constraint],
      "apply_property_policy dry_run false: owner = finance and balance_not_negative back, as the model's config says", now) -%}
  {%- set version = _history_of(accounts)[0].version -%}
  {%- set results = delta_ops.apply_property_policy(models=['accounts'], dry_run=false) -%}
  {%- do _expect(checks, results[0].note == 'properties match the model' and _history_of(accounts)[0].version == version,
      "apply_property_policy again: the table matches its model, nothing committed", results) -%}
{% endmacro %}
