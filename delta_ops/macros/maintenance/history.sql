{#- Print the latest `limit` entries of DESCRIBE HISTORY of each selected Delta table. -#}
{% macro history(models=none, tags=none, schema=none, pattern=none, limit=10) %}
  {%- if limit is not integer or limit < 1 -%}
    {{ exceptions.raise_compiler_error(
        "Invalid history limit " ~ (limit | string | tojson) ~ ": give a whole number >= 1.") }}
  {%- endif -%}
  {%- set selection = delta_ops._select_delta_tables('history', models, tags, schema, pattern) -%}
  {{ return(delta_ops._run_for_each_table('history', selection, delta_ops._history_table, {'limit': limit})) }}
{% endmacro %}

{% macro _history_table(table, options) %}
  {%- set result = delta_ops._try_sql('describe history ' ~ table.relation ~ ' limit ' ~ options.limit) -%}
  {%- if result.error -%}{{ return(delta_ops._failed(result.error)) }}{%- endif -%}
  {%- for entry in delta_ops._rows_as_dicts(result.table) -%}
    {{ log("  v" ~ entry.version ~ "  " ~ entry.timestamp ~ "  " ~ entry.operation ~ "  "
        ~ entry.operationParameters ~ "  " ~ entry.operationMetrics, info=True) }}
  {%- endfor -%}
  {{ return({'status': 'ok', 'note': result.table.rows | length ~ ' entries shown'}) }}
{% endmacro %}
