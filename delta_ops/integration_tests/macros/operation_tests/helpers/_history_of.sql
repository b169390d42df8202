{#- DESCRIBE HISTORY of a table, newest first: dicts of version, timestamp, operation and
    parameters and metrics as dicts. -#}
{% macro _history_of(name) %}
  {%- set entries = [] -%}
  {%- for row in run_query('describe history ' ~ _relation(name)).rows -%}
    {%- do entries.append({'version': row['version'] | int, 'timestamp': row['timestamp'] | string,
        'operation': row['operation'], 'parameters': _as_mapping(row['operationParameters']),
        'metrics': _as_mapping(row['operationMetrics'])}) -%}
  {%- endfor -%}
  {{ return(entries) }}
{% endmacro %}
