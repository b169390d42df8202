{#-
  The history of a Delta table as a query (DESCRIBE HISTORY cannot be a subquery): the
  history is read when the model runs and inlined as VALUES, so it can be filtered and joined.
  `select * from ({{ history_query(ref('fct_orders')) }}) where operation = 'MERGE'`.
  Columns: version, committed_at, operation, operation_parameters (JSON), operation_metrics
  (JSON), read_version.
-#}
{% macro history_query(relation) %}
  {%- do delta_ops._require_sparkdelta('history_query') -%}
  {%- set columns = 'version, committed_at, operation, operation_parameters, operation_metrics, read_version' -%}
  {%- set empty = "select cast(null as bigint) as version, cast(null as timestamp) as committed_at, "
      ~ "cast(null as string) as operation, cast(null as string) as operation_parameters, "
      ~ "cast(null as string) as operation_metrics, cast(null as bigint) as read_version where false" -%}
  {%- if not execute -%}{{ return(empty) }}{%- endif -%}
  {%- if relation is string -%}{%- set relation = delta_ops.relation_from_name(relation) -%}{%- endif -%}
  {%- set history = run_query('describe history ' ~ relation) -%}
  {%- set rows = [] -%}
  {%- for entry in delta_ops._rows_as_dicts(history) -%}
    {%- do rows.append('(' ~ [
        'cast(' ~ (entry.version | int) ~ ' as bigint)',
        'timestamp ' ~ sql_string(entry.timestamp),
        sql_string(entry.operation),
        sql_string(entry.operationParameters | tojson if entry.operationParameters is mapping else entry.operationParameters),
        sql_string(entry.operationMetrics | tojson if entry.operationMetrics is mapping else entry.operationMetrics),
        'cast(' ~ (entry.readVersion if entry.readVersion is not none else 'null') ~ ' as bigint)',
    ] | join(', ') ~ ')') -%}
  {%- endfor -%}
  {%- if not rows -%}{{ return(empty) }}{%- endif -%}
  {{ return('select * from values ' ~ rows | join(', ') ~ ' as history(' ~ columns ~ ')') }}
{% endmacro %}
