{#-
  OPTIMIZE text. `where`: {partition column: value, null or list of them} (values become string
  literals, null the NULL partition); `zorder_by`: list of columns. Identifiers are validated and
  quoted.
-#}
{% macro get_optimize_tables_sql(relation, where=none, zorder_by=none) %}
  {%- set predicates = [] -%}
  {%- if where is not none and where is not mapping -%}
    {{ exceptions.raise_compiler_error(
        "Invalid optimize where " ~ (where | string | tojson)
        ~ ": give {partition_column: value or [values]}.") }}
  {%- endif -%}
  {%- for column, value in (where or {}).items() -%}
    {%- set quoted = safe_identifier(column, 'optimize where column') -%}
    {%- set values = [value] if value is none or value is string or value is number else value -%}
    {%- if values is not iterable or values is mapping or values is string or values | length == 0
        or values | select('boolean') | list or values | select('mapping') | list -%}
      {{ exceptions.raise_compiler_error(
          "Invalid optimize where value for " ~ column ~ ": " ~ (value | string | tojson)
          ~ ": give a partition value, null (the NULL partition) or a non-empty list of them.") }}
    {%- endif -%}
    {%- set literals = [] -%}
    {%- for item in values if item is not none -%}{%- do literals.append(sql_string(item)) -%}{%- endfor -%}
    {%- set terms = [quoted ~ ' in (' ~ literals | join(', ') ~ ')'] if literals else [] -%}
    {%- if values | select('none') | list -%}{%- do terms.append(quoted ~ ' is null') -%}{%- endif -%}
    {%- do predicates.append(terms[0] if terms | length == 1 else '(' ~ terms | join(' or ') ~ ')') -%}
  {%- endfor -%}
  {%- set columns = [] -%}
  {%- for column in delta_ops._as_list(zorder_by, 'optimize zorder_by') -%}
    {%- do columns.append(safe_identifier(column, 'optimize zorder_by column')) -%}
  {%- endfor -%}
  {%- set sql = 'optimize ' ~ relation -%}
  {%- if predicates -%}{%- set sql = sql ~ ' where ' ~ predicates | join(' and ') -%}{%- endif -%}
  {%- if columns -%}{%- set sql = sql ~ ' zorder by (' ~ columns | join(', ') ~ ')' -%}{%- endif -%}
  {{ return(sql) }}
{% endmacro %}
