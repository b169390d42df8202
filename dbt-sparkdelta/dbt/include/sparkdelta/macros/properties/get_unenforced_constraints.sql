{#-
  `primary_key`, `foreign_key` and `unique` constraints of a model (on the model or its
  columns), which open-source Delta Lake cannot enforce, as {table property: description}:
  `dbt.constraint.<name>` = e.g. `primary_key (id)` or
  `foreign_key (customer_id) references <table> (id)`. dbt's semantics for a constraint the
  platform cannot enforce: the model is built and a warning says so, here naming the property
  where the constraint is recorded for catalogs and BI tools (SHOW TBLPROPERTIES). Pure but for
  the warning, which `warn=false` silences.
-#}
{% macro get_unenforced_constraints(model_node, warn=true) %}
  {%- set found = {} -%}
  {%- set declared = get_declared_constraints(model_node) -%}
  {%- for column_name, constraint in declared if constraint.get('type') in ['primary_key', 'foreign_key', 'unique'] -%}
    {%- set kind = constraint.get('type') -%}
    {%- set columns = [column_name] if column_name else (constraint.get('columns') or []) -%}
    {%- set description = kind ~ ' (' ~ columns | join(', ') ~ ')' -%}
    {%- if kind == 'foreign_key' -%}
      {%- if constraint.get('to') -%}
        {%- set description = description ~ ' references ' ~ constraint.get('to')
            ~ ' (' ~ (constraint.get('to_columns') or []) | join(', ') ~ ')' -%}
      {%- elif constraint.get('expression') -%}
        {%- set description = description ~ ' references ' ~ constraint.get('expression') -%}
      {%- endif -%}
    {%- endif -%}
    {%- set name = constraint.get('name') or (kind ~ '_' ~ columns | join('_')) -%}
    {%- if not modules.re.fullmatch('[A-Za-z0-9_]+', name) -%}
      {%- set name = kind ~ '_' ~ local_md5(name)[:8] -%}
    {%- endif -%}
    {%- do found.update({'dbt.constraint.' ~ name: description}) -%}
  {%- endfor -%}
  {%- if found and warn -%}
    {%- set listed = [] -%}
    {%- for key, description in found.items() -%}{%- do listed.append(description) -%}{%- endfor -%}
    {%- do exceptions.warn(
        "Model " ~ model_node.unique_id ~ ": Delta Lake does not enforce " ~ listed | join('; ')
        ~ ". The model is built; the constraint(s) are recorded as table properties "
        ~ found.keys() | sort | join(', ') ~ " (SHOW TBLPROPERTIES). Enforce them with data tests "
        ~ "(unique, relationships).") -%}
  {%- endif -%}
  {{ return(found) }}
{% endmacro %}
