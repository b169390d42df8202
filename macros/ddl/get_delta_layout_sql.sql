{#- The physical layout clause: liquid clustering (CLUSTER BY) or Hive-style partitions. -#}
{% macro get_delta_layout_sql() %}
  {{ return(adapter.dispatch('get_delta_layout_sql', 'lakehouse')()) }}
{% endmacro %}

{% macro default__get_delta_layout_sql() -%}
  {%- set clustered = lakehouse.config_column_list('liquid_clustered_by') -%}
  {%- set partitioned = lakehouse.config_column_list('partition_by') -%}
  {%- if clustered -%}
    cluster by ({{ clustered | join(', ') }})
  {%- elif partitioned -%}
    partitioned by ({{ partitioned | join(', ') }})
  {%- endif -%}
{%- endmacro %}
