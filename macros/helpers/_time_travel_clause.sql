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
    {{ return(" timestamp as of '" ~ timestamp ~ "'") }}
  {%- endif -%}
  {{ return('') }}
{% endmacro %}
