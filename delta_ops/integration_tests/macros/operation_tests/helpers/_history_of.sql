{#- DESCRIBE HISTORY of a table, newest first: dicts of version, timestamp, operation and
    parameters and metrics as dicts. -#}
{% macro _history_of(name) %}
  {%- set entries = [] -%}
  {%- for row in run_query('describe history ' ~ delta_ops.relation_from_name(name)).rows -%}
    {%- do entries.append({'version': row['version'] | int, 'timestamp': row['timestamp'] | string,
        'operation': row['operation'], 'parameters': delta_ops._json_value(row['operationParameters'], {}),
        'metrics': delta_ops._json_value(row['operationMetrics'], {})}) -%}
  {%- endfor -%}
  {{ return(entries) }}
{% endmacro %}
