{#- Print DESCRIBE DETAIL of each selected Delta table. -#}
{% macro detail(models=none, tags=none, schema=none, pattern=none) %}
  {%- set selection = delta_ops._select_delta_tables('detail', models, tags, schema, pattern) -%}
  {{ return(delta_ops._run_for_each_table('detail', selection, delta_ops._detail_table)) }}
{% endmacro %}

{% macro _detail_table(table, options) %}
  {%- for key, value in table.detail.items() -%}
    {{ log("  " ~ key ~ ": " ~ (value | tojson if value is mapping or (value is iterable and value is not string) else value), info=True) }}
  {%- endfor -%}
  {{ return({'status': 'ok', 'note': table.detail.numFiles ~ ' files, '
      ~ table.detail.sizeInBytes ~ ' bytes'}) }}
{% endmacro %}
