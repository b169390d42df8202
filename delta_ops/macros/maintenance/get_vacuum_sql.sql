{#- VACUUM text: optional retention in hours, LITE mode (Delta 4.0+), DRY RUN. -#}
{% macro get_vacuum_sql(relation, retain_hours=none, lite=false, dry_run=true) %}
  {%- set sql = 'vacuum ' ~ relation -%}
  {%- if retain_hours is not none -%}
    {%- set sql = sql ~ ' retain ' ~ delta_ops._hours(retain_hours, 'vacuum retain_hours') ~ ' hours' -%}
  {%- endif -%}
  {%- if lite -%}{%- set sql = sql ~ ' lite' -%}{%- endif -%}
  {%- if dry_run -%}{%- set sql = sql ~ ' dry run' -%}{%- endif -%}
  {{ return(sql) }}
{% endmacro %}

{#- A non-negative number of hours from an argument, or a clear error. -#}
{% macro _hours(value, what) %}
  {%- if value is number and value >= 0 and value is not sameas true and value is not sameas false -%}
    {{ return(value) }}
  {%- endif -%}
  {{ exceptions.raise_compiler_error(
      "Invalid " ~ what ~ " " ~ (value | string | tojson) ~ ": give a number of hours >= 0.") }}
{% endmacro %}

{#- Hours of a Delta interval property such as 'interval 7 days' (none when unreadable). -#}
{% macro _interval_hours(interval) %}
  {%- set found = modules.re.fullmatch('[ ]*(interval[ ]+)?([0-9]+)[ ]*(week|day|hour|minute|second)s?[ ]*', interval | lower) -%}
  {%- if not found -%}{{ return(none) }}{%- endif -%}
  {%- set per_unit = {'week': 168, 'day': 24, 'hour': 1, 'minute': 1 / 60, 'second': 1 / 3600} -%}
  {{ return(found.group(2) | int * per_unit[found.group(3)]) }}
{% endmacro %}
