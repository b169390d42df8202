{#-
  persist_docs' column comments. dbt-spark writes them only when the model sets file_format
  (so a model relying on this adapter's default, Delta, got none) and escapes quotes but not
  backslashes; here the default counts and every comment is one exact string literal.
-#}
{% macro sparkdelta__alter_column_comment(relation, column_dict) %}
  {%- if config.get('file_format', 'delta') in ['delta', 'hudi', 'iceberg'] -%}
    {%- for column_name in column_dict -%}
      {%- set column = adapter.quote(column_name) if column_dict[column_name]['quote'] else column_name -%}
      {%- do run_query('alter table ' ~ relation ~ ' alter column ' ~ column
          ~ ' comment ' ~ sql_string(column_dict[column_name]['description'])) -%}
    {%- endfor -%}
  {%- endif -%}
{% endmacro %}
