{#- ALTER TABLE ... SET TBLPROPERTIES text; keys validated, keys and values quoted. -#}
{% macro get_set_tblproperties_sql(relation, properties) %}
  {%- set pairs = [] -%}
  {%- for key, value in properties.items() -%}
    {%- if key is not string or not modules.re.fullmatch('[A-Za-z0-9_.-]+', key) -%}
      {{ exceptions.raise_compiler_error(
          "Invalid table property " ~ (key | string | tojson) ~ " for " ~ relation
          ~ ": use letters, digits, '.', '_' and '-'.") }}
    {%- endif -%}
    {%- do pairs.append(sql_string(key) ~ ' = ' ~ sql_string(value)) -%}
  {%- endfor -%}
  {{ return('alter table ' ~ relation ~ ' set tblproperties (' ~ pairs | join(', ') ~ ')') }}
{% endmacro %}
