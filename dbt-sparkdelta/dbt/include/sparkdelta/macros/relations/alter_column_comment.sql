{#-
  persist_docs' column comments. dbt-spark writes them only when the model sets file_format
  (so a model relying on this adapter's default, Delta, got none) and escapes quotes but not
  backslashes; here the default counts and every comment is one exact string literal. A Delta
  seed got its comments in its one CREATE OR REPLACE commit (create_csv_table): no ALTER here.
-#}
{% macro sparkdelta__alter_column_comment(relation, column_dict) %}
  {%- set delta_seed = model is defined and model.resource_type == 'seed' and config.get('file_format', 'delta') == 'delta' -%}
  {%- if config.get('file_format', 'delta') in ['delta', 'hudi', 'iceberg'] and not delta_seed -%}
    {%- for column_name in column_dict -%}
      {%- set column = adapter.quote(column_name) if column_dict[column_name]['quote'] else column_name -%}
      {%- do run_query('alter table ' ~ relation ~ ' alter column ' ~ column
          ~ ' comment ' ~ sql_string(column_dict[column_name]['description'])) -%}
    {%- endfor -%}
  {%- endif -%}
{% endmacro %}
