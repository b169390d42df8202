{#-
  Give a model's Delta table the column defaults of its `column_defaults` config, after its data
  is written. A CREATE TABLE ... AS SELECT cannot declare defaults (Spark refuses a column list in
  a CTAS), so they are set by ALTER COLUMN right after it, in their own commits; the table
  already has the allowColumnDefaults feature from its first commit. `created`: the table was
  just (re)created, so it has no defaults yet. `detail`: the table's DESCRIBE DETAIL from this
  run, when the caller has it: a table without the allowColumnDefaults feature has no default
  (Delta refuses one without it), so a model that declares none has nothing to read or drop.
-#}
{% macro apply_column_defaults(relation, created=false, detail=none) %}
  {%- set desired = get_column_defaults(model, config) -%}
  {%- if created and not desired -%}{{ return([]) }}{%- endif -%}
  {%- if not desired and detail is not none and 'allowColumnDefaults' not in (detail.get('tableFeatures') or []) -%}
    {{ return([]) }}
  {%- endif -%}
  {%- set current = {} if created else _current_column_defaults(relation) -%}
  {%- set statements = get_column_defaults_sql(relation, desired, current) -%}
  {%- if statements -%}
    {%- set columns = adapter.get_columns_in_relation(relation) | map(attribute='name') | map('lower') | list -%}
    {%- for column in desired if column not in columns -%}
      {{ exceptions.raise_compiler_error(
          "Model " ~ model.unique_id ~ ": `column_defaults` names " ~ column ~ ", which is not a "
          ~ "column of " ~ relation ~ " (columns: " ~ columns | join(', ') ~ ").") }}
    {%- endfor -%}
  {%- endif -%}
  {%- for statement in statements -%}
    {%- do log(model.unique_id ~ ": " ~ statement, info=true) -%}
    {%- do run_query(statement) -%}
  {%- endfor -%}
  {{ return(statements) }}
{% endmacro %}

{#- {column: default expression} from the "# Column Default Values" part of DESCRIBE EXTENDED. -#}
{% macro _current_column_defaults(relation) %}
  {%- set defaults = {} -%}
  {%- set state = {'in_section': false} -%}
  {%- for row in run_query('describe table extended ' ~ relation) -%}
    {%- if row[0] == '# Column Default Values' -%}
      {%- do state.update({'in_section': true}) -%}
    {%- elif state.in_section and ((row[0] or '') == '' or row[0].startswith('#')) -%}
      {%- do state.update({'in_section': false}) -%}
    {%- elif state.in_section -%}
      {%- do defaults.update({row[0] | lower: row[2]}) -%}
    {%- endif -%}
  {%- endfor -%}
  {{ return(defaults) }}
{% endmacro %}
