{#- The newest commit of a Delta table (DESCRIBE HISTORY ... LIMIT 1) as a dict, with its
    operationMetrics read as a dict under `metrics`. -#}
{% macro _last_commit(relation) %}
  {%- set commit = _rows_as_dicts(_try_sql('describe history ' ~ relation ~ ' limit 1').table)[0] -%}
  {%- do commit.update({'metrics': _json_value(commit.operationMetrics, {})}) -%}
  {{ return(commit) }}
{% endmacro %}
