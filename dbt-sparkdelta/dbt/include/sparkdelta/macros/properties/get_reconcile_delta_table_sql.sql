{#-
  The ALTER statements that bring an existing Delta table in line with its model's config
  (pure: returns a list of SQL texts). What changes is decided in Python
  (adapter.delta_table_changes, dbt/adapters/sparkdelta/relation_configs.py); this renders it:
  - properties: set what changed; unset what the project managed before (recorded in
    sparkdelta.managed_properties) and the config no longer has; never touch anything else;
  - features: turn on the ones the config asks for (they cannot be turned off by a property);
  - constraints: drop the managed ones that left the config or changed, add the new ones;
  - liquid clustering: ALTER TABLE ... CLUSTER BY the configured columns (or NONE).
-#}
{% macro get_reconcile_delta_table_sql(relation, desired, current, desired_clustering, current_clustering) %}
  {%- set changes = adapter.delta_table_changes(desired, current, desired_clustering, current_clustering) -%}
  {%- set statements = [] -%}
  {%- if changes.unset_properties -%}
    {%- set quoted = [] -%}
    {%- for key in changes.unset_properties -%}{%- do quoted.append(sql_string(key)) -%}{%- endfor -%}
    {%- do statements.append('alter table ' ~ relation ~ ' unset tblproperties if exists (' ~ quoted | join(', ') ~ ')') -%}
  {%- endif -%}
  {%- for name in changes.drop_constraints -%}
    {%- do statements.append('alter table ' ~ relation ~ ' drop constraint if exists ' ~ safe_identifier(name)) -%}
  {%- endfor -%}
  {#-- the record of what the project manages (in the SET) is written only after the removals
       it no longer lists: a run that dies between them leaves nothing unmanaged behind --#}
  {%- if changes.set_properties -%}
    {%- do statements.append('alter table ' ~ relation ~ ' set ' ~ get_tblproperties_sql(changes.set_properties) | trim) -%}
  {%- endif -%}
  {%- for name, expression in changes.add_constraints.items() -%}
    {%- do statements.append('alter table ' ~ relation ~ ' add constraint ' ~ safe_identifier(name) ~ ' check (' ~ expression ~ ')') -%}
  {%- endfor -%}
  {%- if changes.cluster_by is not none -%}
    {%- set columns = [] -%}
    {%- for column in changes.cluster_by -%}{%- do columns.append(safe_identifier(column)) -%}{%- endfor -%}
    {%- do statements.append('alter table ' ~ relation ~ ' cluster by ' ~ ('(' ~ columns | join(', ') ~ ')' if columns else 'none')) -%}
  {%- endif -%}
  {{ return(statements) }}
{% endmacro %}
