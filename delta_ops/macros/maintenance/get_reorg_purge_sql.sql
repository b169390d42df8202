{#- REORG TABLE ... APPLY (PURGE) text. -#}
{% macro get_reorg_purge_sql(relation) %}
  {{ return('reorg table ' ~ relation ~ ' apply (purge)') }}
{% endmacro %}
