{#- A step outcome of a failed table, for _run_for_each_table. -#}
{% macro _failed(note) %}{{ return({'status': 'failed', 'note': note}) }}{% endmacro %}
