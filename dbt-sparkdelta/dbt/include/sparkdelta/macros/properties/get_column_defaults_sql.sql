{#-
  ALTER COLUMN statements that make a table's column defaults equal to `desired`
  ({column: SQL expression}), given its `current` ones (pure: returns a list of SQL texts).
  The model owns its table's defaults: a default the config no longer has is dropped (Delta
  never sets one on its own, and a full refresh drops them all anyway).
-#}
{% macro get_column_defaults_sql(relation, desired, current) %}
  {%- set statements = [] -%}
  {%- for column in current | sort if column not in desired -%}
    {%- do statements.append('alter table ' ~ relation ~ ' alter column '
        ~ safe_identifier(column) ~ ' drop default') -%}
  {%- endfor -%}
  {%- for column, expression in desired | dictsort -%}
    {%- if (current.get(column) or '') | trim != expression | trim -%}
      {%- do statements.append('alter table ' ~ relation ~ ' alter column '
          ~ safe_identifier(column) ~ ' set default ' ~ expression) -%}
    {%- endif -%}
  {%- endfor -%}
  {{ return(statements) }}
{% endmacro %}
