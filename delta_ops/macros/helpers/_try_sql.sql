{#- Run one statement (with session settings for it alone); {'table': agate table} or
    {'error': message} (see adapter.try_execute, which only the sparkdelta adapter has). -#}
{% macro _try_sql(sql, settings={}) %}
  {%- do delta_ops._require_sparkdelta() -%}
  {{ log('operation sql: ' ~ sql, info=False) }}
  {{ return(adapter.try_execute(sql, settings)) }}
{% endmacro %}
