{#- RESTORE TABLE ... TO VERSION|TIMESTAMP AS OF ... text. -#}
{% macro get_restore_sql(relation, version=none, timestamp=none) %}
  {%- if version is none and timestamp is none -%}
    {{ exceptions.raise_compiler_error("restore " ~ relation ~ ": give version or timestamp.") }}
  {%- endif -%}
  {{ return('restore table ' ~ relation ~ ' to' ~ delta_ops._time_travel_clause(version, timestamp, 'restore ' ~ relation)) }}
{% endmacro %}
