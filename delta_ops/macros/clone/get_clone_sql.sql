{#- CREATE [OR REPLACE] TABLE target SHALLOW CLONE source [VERSION|TIMESTAMP AS OF ...] text. -#}
{% macro get_clone_sql(source, target, version=none, timestamp=none, replace=false) %}
  {{ return('create ' ~ ('or replace ' if replace else '') ~ 'table ' ~ target ~ ' shallow clone '
      ~ source ~ delta_ops._time_travel_clause(version, timestamp, 'clone of ' ~ source)) }}
{% endmacro %}
