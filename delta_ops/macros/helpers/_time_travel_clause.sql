{#-
  ' version as of N', " timestamp as of '...'" or '' from a version or timestamp argument,
  validated (a version is a whole number >= 0; a timestamp is 'YYYY-MM-DD[ HH:MM[:SS[.ffffff]]]').
-#}
{% macro _time_travel_clause(version, timestamp, what) %}
  {%- if version is not none and timestamp is not none -%}
    {{ exceptions.raise_compiler_error(what ~ ": give version or timestamp, not both.") }}
  {%- endif -%}
  {%- if version is not none -%}
    {%- if not modules.re.fullmatch('[0-9]+', version | string) or version is boolean -%}
      {{ exceptions.raise_compiler_error(
          "Invalid " ~ what ~ " version " ~ (version | string | tojson) ~ ": give a whole number >= 0.") }}
    {%- endif -%}
    {{ return(' version as of ' ~ (version | int)) }}
  {%- endif -%}
  {%- if timestamp is not none -%}
    {%- if timestamp is not string or not modules.re.fullmatch(
        '[0-9]{4}-[0-9]{2}-[0-9]{2}([ T][0-9]{2}:[0-9]{2}(:[0-9]{2}([.][0-9]{1,6})?)?)?', timestamp) -%}
      {{ exceptions.raise_compiler_error(
          "Invalid " ~ what ~ " timestamp " ~ (timestamp | string | tojson)
          ~ ": give 'YYYY-MM-DD' or 'YYYY-MM-DD HH:MM:SS' (session time zone).") }}
    {%- endif -%}
    {%- set n = modules.re.findall('[0-9]+', timestamp) | map('int') | list + [0, 0, 0] -%}
    {%- set leap = n[0] % 4 == 0 and (n[0] % 100 != 0 or n[0] % 400 == 0) -%}
    {%- set month_days = [31, 29 if leap else 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31] -%}
    {%- if not (1 <= n[1] <= 12 and 1 <= n[2] <= month_days[n[1] - 1] and n[3] < 24 and n[4] < 60 and n[5] < 60) -%}
      {{ exceptions.raise_compiler_error(
          "Invalid " ~ what ~ " timestamp " ~ (timestamp | string | tojson)
          ~ ": not a date and time of the calendar; give 'YYYY-MM-DD' or 'YYYY-MM-DD HH:MM:SS'.") }}
    {%- endif -%}
    {{ return(" timestamp as of '" ~ timestamp ~ "'") }}
  {%- endif -%}
  {{ return('') }}
{% endmacro %}
