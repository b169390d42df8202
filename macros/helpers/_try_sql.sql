{#- Run one statement (with session settings for it alone); {'table': agate table} or
    {'error': message} (see adapter.try_execute). -#}
{% macro _try_sql(sql, settings={}) %}
  {{ log('operation sql: ' ~ sql, info=False) }}
  {{ return(adapter.try_execute(sql, settings)) }}
{% endmacro %}
