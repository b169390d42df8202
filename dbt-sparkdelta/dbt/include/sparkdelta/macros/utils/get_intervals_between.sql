{#-
  dbt's get_intervals_between: the number of `datepart`s between two dates, computed by Spark.
  dbt's default renders a NULL into the model when Spark cannot read a date (e.g. '09/01/2023'
  with ANSI mode off, as dbt-spark sets it); here that is an error naming the arguments.
-#}
{% macro sparkdelta__get_intervals_between(start_date, end_date, datepart) -%}
  {%- if not execute -%}{{ return(1) }}{%- endif -%}
  {%- set result = run_query('select ' ~ dbt.datediff(start_date, end_date, datepart)) -%}
  {%- if result.rows | length == 0 or result.rows[0][0] is none -%}
    {{ exceptions.raise_compiler_error(
        "get_intervals_between(" ~ start_date ~ ", " ~ end_date ~ ", " ~ datepart ~ "): Spark "
        ~ "could not read the dates; give them as 'YYYY-MM-DD' or as date expressions.") }}
  {%- endif -%}
  {{ return(result.rows[0][0] | int) }}
{%- endmacro %}
