{#-
  dbt's cross-database listagg on Spark 4: Spark's own `listagg ... WITHIN GROUP (ORDER BY ...)`
  honours the order (dbt-spark's collect_list ignores it). With `limit_num` the first values in
  that order are kept: the values are collected with their order keys, sorted, sliced and
  joined (plain columns as order keys, all in one direction).
-#}
{% macro sparkdelta__listagg(measure, delimiter_text, order_by_clause, limit_num) -%}
  {%- set delimiter = delimiter_text if delimiter_text is not none else "','" -%}
  {%- if not limit_num -%}
    {{ return('listagg(' ~ measure ~ ', ' ~ delimiter ~ ')'
        ~ (' within group (' ~ order_by_clause ~ ')' if order_by_clause else '')) }}
  {%- endif -%}
  {%- if limit_num is not integer or limit_num < 1 -%}
    {{ exceptions.raise_compiler_error(
        "listagg: limit_num must be a whole number >= 1, got " ~ (limit_num | string | tojson) ~ ".") }}
  {%- endif -%}
  {%- set keys = [] -%}
  {%- set directions = [] -%}
  {%- set clause = modules.re.sub('(?i)^\\s*order\\s+by\\s+', '', order_by_clause or '') -%}
  {%- for term in clause.split(',') if term | trim -%}
    {%- set found = modules.re.fullmatch('(?i)\\s*([A-Za-z_][A-Za-z0-9_.]*)(\\s+(asc|desc))?\\s*', term) -%}
    {%- if not found -%}
      {{ exceptions.raise_compiler_error(
          "listagg with limit_num: order_by_clause '" ~ order_by_clause ~ "' must order by plain "
          ~ "columns, e.g. 'order by order_col desc'.") }}
    {%- endif -%}
    {%- do keys.append("'k" ~ loop.index0 ~ "', " ~ found.group(1)) -%}
    {%- do directions.append((found.group(3) or 'asc') | lower) -%}
  {%- endfor -%}
  {%- if directions | unique | list | length > 1 -%}
    {{ exceptions.raise_compiler_error(
        "listagg with limit_num: order_by_clause '" ~ order_by_clause ~ "' mixes asc and desc; "
        ~ "order every column in one direction.") }}
  {%- endif -%}
  {%- set collected = 'collect_list(named_struct(' ~ (keys + ["'v', " ~ measure]) | join(', ') ~ '))' -%}
  {%- set ascending = 'false' if directions and directions[0] == 'desc' else 'true' -%}
  {{ return('array_join(slice(transform(sort_array(' ~ collected ~ ', ' ~ ascending ~ '), x -> x.v), 1, '
      ~ limit_num ~ '), ' ~ delimiter ~ ')') }}
{%- endmacro %}
