{#- A commit timestamp as a datetime, whether the target returned a datetime or its text (Thrift). -#}
{% macro _as_datetime(value) %}
  {{ return(modules.datetime.datetime.fromisoformat(value | string)) }}
{% endmacro %}
