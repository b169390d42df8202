{#- Print the latest `limit` entries of DESCRIBE HISTORY of each selected Delta table. -#}
{% macro history(models=none, tags=none, schema=none, pattern=none, limit=10) %}
  {%- if limit is not integer or limit < 1 -%}
    {{ exceptions.raise_compiler_error(
        "Invalid history limit " ~ (limit | string | tojson) ~ ": give a whole number >= 1.") }}
  {%- endif -%}
  {%- set selection = _select_delta_tables('history', models, tags, schema, pattern) -%}
  {{ return(_run_for_each_table('history', selection, _history_table, {'limit': limit})) }}
{% endmacro %}

{% macro _history_table(table, options) %}
  {%- set result = _try_sql('describe history ' ~ table.relation ~ ' limit ' ~ options.limit) -%}
  {%- if result.error -%}{{ return(_failed(result.error)) }}{%- endif -%}
  {%- for entry in _rows_as_dicts(result.table) -%}
    {{ log("  v" ~ entry.version ~ "  " ~ entry.timestamp ~ "  " ~ entry.operation ~ "  "
        ~ entry.operationParameters ~ "  " ~ entry.operationMetrics, info=True) }}
  {%- endfor -%}
  {{ return({'status': 'ok', 'note': result.table.rows | length ~ ' entries shown'}) }}
{% endmacro %}
