{#-
  A column's type changed in the model (on_schema_change `sync_all_columns`): Delta changes it
  in place when the change is a widening and the table has type widening on
  (`delta.enableTypeWidening`); the new type is recorded in the table's schema metadata
  (`delta.typeChanges`), no data file is rewritten. check_column_type_changes refuses every
  other change before anything is altered.
-#}
{% macro sparkdelta__alter_column_type(relation, column_name, new_column_type) %}
  {%- do run_query('alter table ' ~ relation ~ ' alter column ' ~ quote_identifier(column_name)
      ~ ' type ' ~ new_column_type) -%}
{% endmacro %}


{#-
  Before on_schema_change `sync_all_columns` alters a table: every column whose type the model
  changes must be one Delta widens in place on it (adapter.delta_column_type_problem), else the
  run stops naming the model, the table, each column and what to do; nothing is changed (no
  column added or dropped either).
-#}
{% macro check_column_type_changes(on_schema_change, source_relation, target_relation) %}
  {%- if on_schema_change != 'sync_all_columns' -%}{{ return(none) }}{%- endif -%}
  {%- set current = {} -%}
  {%- for column in adapter.get_columns_in_relation(target_relation) -%}
    {%- do current.update({column.name | lower: column.data_type}) -%}
  {%- endfor -%}
  {%- set properties = describe_detail(target_relation)['properties'] -%}
  {%- set problems = [] -%}
  {%- for column in adapter.get_columns_in_relation(source_relation) -%}
    {%- set from_type = current.get(column.name | lower) -%}
    {%- if from_type is not none and from_type != column.data_type -%}
      {%- set problem = adapter.delta_column_type_problem(from_type, column.data_type, properties) -%}
      {%- if problem -%}{%- do problems.append(column.name ~ ': ' ~ problem) -%}{%- endif -%}
    {%- endif -%}
  {%- endfor -%}
  {%- if problems -%}
    {{ exceptions.raise_compiler_error(
        "Model " ~ model.unique_id ~ " (on_schema_change='sync_all_columns') changes the type of "
        ~ "column(s) of " ~ target_relation ~ " that Delta cannot change in place. "
        ~ problems | join('; ') ~ ". Nothing was changed.") }}
  {%- endif -%}
{% endmacro %}
