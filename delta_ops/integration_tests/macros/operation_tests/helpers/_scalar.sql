{#- The first value of the first row of a query. -#}
{% macro _scalar(sql) %}
  {{ return(run_query(sql).rows[0][0]) }}
{% endmacro %}
