{#-
  on_schema_change `append_new_columns` / `sync_all_columns` on a Delta table: new columns are
  added, and removed ones dropped with ALTER TABLE ... DROP COLUMNS, which Delta allows only
  with column mapping (`tblproperties: {'delta.columnMapping.mode': 'name'}`). Without it the
  run stops, naming the model, the columns and that property; nothing is changed. Column names
  come from the data, so they are quoted (dashes, spaces, keywords).
-#}
{% macro sparkdelta__alter_relation_add_remove_columns(relation, add_columns, remove_columns) %}
  {%- if remove_columns -%}
    {%- set names = remove_columns | map(attribute='name') | list -%}
    {%- set mapping = describe_detail(relation)['properties'].get('delta.columnMapping.mode', 'none') -%}
    {%- if mapping not in ['name', 'id'] -%}
      {{ exceptions.raise_compiler_error(
          "Model " ~ model.unique_id ~ ": on_schema_change='" ~ config.get('on_schema_change')
          ~ "' must drop column(s) " ~ names | join(', ') ~ " from " ~ relation ~ ", and Delta drops "
          ~ "columns only with column mapping. Add tblproperties: {'delta.columnMapping.mode': 'name'} "
          ~ "to the model, or run it with --full-refresh. Nothing was changed.") }}
    {%- endif -%}
  {%- endif -%}
  {%- if add_columns -%}
    {%- set columns = [] -%}
    {%- for column in add_columns -%}
      {%- do columns.append(quote_identifier(column.name) ~ ' ' ~ column.data_type) -%}
    {%- endfor -%}
    {%- do run_query('alter table ' ~ relation ~ ' add columns (' ~ columns | join(', ') ~ ')') -%}
  {%- endif -%}
  {%- if remove_columns -%}
    {%- set columns = [] -%}
    {%- for column in remove_columns -%}{%- do columns.append(quote_identifier(column.name)) -%}{%- endfor -%}
    {%- do run_query('alter table ' ~ relation ~ ' drop columns (' ~ columns | join(', ') ~ ')') -%}
  {%- endif -%}
{% endmacro %}
