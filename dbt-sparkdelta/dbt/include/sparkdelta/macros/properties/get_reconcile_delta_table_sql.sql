{#-
  The ALTER statements that bring an existing Delta table in line with its model's config
  (pure: returns a list of SQL texts).
  - properties: set what changed; unset what the project managed before (recorded in
    sparkdelta.managed_properties) and the config no longer has; never touch anything else;
  - features: turn on the ones the config asks for (they cannot be turned off by a property);
  - constraints: drop the managed ones that left the config or changed, add the new ones;
  - liquid clustering: ALTER TABLE ... CLUSTER BY the configured columns (or NONE).
-#}
{% macro get_reconcile_delta_table_sql(relation, desired, current, desired_clustering, current_clustering) %}
  {%- set statements = [] -%}
  {%- set to_set = {} -%}
  {%- for key, value in desired.items() if not key.startswith('delta.constraints.') -%}
    {%- if current.get(key) != value -%}
      {%- do to_set.update({key: value}) -%}
    {%- endif -%}
  {%- endfor -%}
  {%- set previously_managed = (current.get('sparkdelta.managed_properties') or '').split(',') | reject('equalto', '') | list -%}
  {%- set to_unset = [] -%}
  {%- for key in previously_managed if key not in desired and key in current -%}
    {%- do to_unset.append(key) -%}
  {%- endfor -%}

  {%- set desired_constraints = {} -%}
  {%- for key, value in desired.items() if key.startswith('delta.constraints.') -%}
    {%- do desired_constraints.update({key[('delta.constraints.' | length):]: value}) -%}
  {%- endfor -%}
  {%- set previous_constraints = (current.get('sparkdelta.managed_constraints') or '').split(',') | reject('equalto', '') | list -%}
  {%- for name in previous_constraints if ('delta.constraints.' ~ name) in current -%}
    {%- if desired_constraints.get(name) != current['delta.constraints.' ~ name] -%}
      {%- do statements.append('alter table ' ~ relation ~ ' drop constraint if exists ' ~ safe_identifier(name)) -%}
    {%- endif -%}
  {%- endfor -%}
  {%- for name, expression in desired_constraints.items() -%}
    {%- if current.get('delta.constraints.' ~ name) != expression -%}
      {%- do statements.append('alter table ' ~ relation ~ ' add constraint ' ~ safe_identifier(name) ~ ' check (' ~ expression ~ ')') -%}
    {%- endif -%}
  {%- endfor -%}

  {%- if to_unset -%}
    {%- set quoted = [] -%}
    {%- for key in to_unset -%}{%- do quoted.append(sql_string(key)) -%}{%- endfor -%}
    {%- do statements.insert(0, 'alter table ' ~ relation ~ ' unset tblproperties if exists (' ~ quoted | join(', ') ~ ')') -%}
  {%- endif -%}
  {%- if to_set -%}
    {%- do statements.insert(0, 'alter table ' ~ relation ~ ' set ' ~ get_tblproperties_sql(to_set) | trim) -%}
  {%- endif -%}

  {%- if desired_clustering != current_clustering -%}
    {%- set columns = [] -%}
    {%- for column in desired_clustering -%}{%- do columns.append(safe_identifier(column)) -%}{%- endfor -%}
    {%- do statements.append('alter table ' ~ relation ~ ' cluster by ' ~ ('(' ~ columns | join(', ') ~ ')' if columns else 'none')) -%}
  {%- endif -%}
  {{ return(statements) }}
{% endmacro %}
