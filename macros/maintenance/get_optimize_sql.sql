{#-
  OPTIMIZE text. `where`: {partition column: value or list of values} (values become string
  literals); `zorder_by`: list of columns. Identifiers are validated and quoted.
-#}
{% macro get_optimize_sql(relation, where=none, zorder_by=none) %}
  {%- set predicates = [] -%}
  {%- if where is not none and where is not mapping -%}
    {{ exceptions.raise_compiler_error(
        "Invalid optimize where " ~ (where | string | tojson)
        ~ ": give {partition_column: value or [values]}.") }}
  {%- endif -%}
  {%- for column, value in (where or {}).items() -%}
    {%- set quoted = safe_identifier(column, 'optimize where column') -%}
    {%- if value is string or value is number -%}
      {%- do predicates.append(quoted ~ ' = ' ~ sql_string(value)) -%}
    {%- else -%}
      {%- set literals = [] -%}
      {%- for item in value -%}{%- do literals.append(sql_string(item)) -%}{%- endfor -%}
      {%- do predicates.append(quoted ~ ' in (' ~ literals | join(', ') ~ ')') -%}
    {%- endif -%}
  {%- endfor -%}
  {%- set columns = [] -%}
  {%- for column in _as_list(zorder_by, 'optimize zorder_by') -%}
    {%- do columns.append(safe_identifier(column, 'optimize zorder_by column')) -%}
  {%- endfor -%}
  {%- set sql = 'optimize ' ~ relation -%}
  {%- if predicates -%}{%- set sql = sql ~ ' where ' ~ predicates | join(' and ') -%}{%- endif -%}
  {%- if columns -%}{%- set sql = sql ~ ' zorder by (' ~ columns | join(', ') ~ ')' -%}{%- endif -%}
  {{ return(sql) }}
{% endmacro %}
