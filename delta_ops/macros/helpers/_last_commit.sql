{#- The newest commit of a Delta table (DESCRIBE HISTORY ... LIMIT 1) as a dict, with its
    operationMetrics read as a dict under `metrics`. -#}
{% macro _last_commit(relation) %}
  {%- set commit = delta_ops._rows_as_dicts(delta_ops._try_sql('describe history ' ~ relation ~ ' limit 1').table)[0] -%}
  {%- do commit.update({'metrics': delta_ops._json_value(commit.operationMetrics, {})}) -%}
  {{ return(commit) }}
{% endmacro %}
