{#- The physical layout clause: liquid clustering (CLUSTER BY) or Hive-style partitions. -#}
{% macro get_delta_layout_sql() -%}
  {%- set clustered = config_column_list('liquid_clustered_by') -%}
  {%- set partitioned = config_column_list('partition_by') -%}
  {%- if clustered -%}
    cluster by ({{ clustered | join(', ') }})
  {%- elif partitioned -%}
    partitioned by ({{ partitioned | join(', ') }})
  {%- endif -%}
{%- endmacro %}
