{#- Run one statement (with session settings for it alone); {'table': agate table} or
    {'error': message} (see adapter.try_execute, which only the sparkdelta adapter has). -#}
{% macro _try_sql(sql, settings={}) %}
  {%- if adapter.type() != 'sparkdelta' -%}
    {{ exceptions.raise_compiler_error(
        "delta_ops needs the dbt-sparkdelta adapter (a profile with `type: sparkdelta`); "
        ~ "this target's type is " ~ adapter.type() ~ ".") }}
  {%- endif -%}
  {{ log('operation sql: ' ~ sql, info=False) }}
  {{ return(adapter.try_execute(sql, settings)) }}
{% endmacro %}
