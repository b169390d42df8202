{#-
  Run on every incremental run of a Delta model, before its data is written: apply the config's
  properties, features, constraints and clustering to the existing table, and log the protocol
  the table requires when that changed. Returns the table's DESCRIBE DETAIL as it stands after
  (a dict, see describe_detail).
  One DESCRIBE DETAIL gives the properties, features, protocol and layout; SHOW TBLPROPERTIES
  runs only for a protocol whose features DESCRIBE DETAIL cannot tell apart from the ones its
  versions imply (adapter.table_properties_from_detail).
-#}
{% macro reconcile_delta_table(relation) %}
  {%- set detail_before = describe_detail(relation) -%}
  {%- set current = adapter.table_properties_from_detail(detail_before) -%}
  {%- if current is none -%}
    {%- set current = {} -%}
    {%- for row in run_query('show tblproperties ' ~ relation) -%}
      {%- do current.update({row[0]: row[1]}) -%}
    {%- endfor -%}
  {%- endif -%}
  {%- if config.get('partition_by') is not none or detail_before['partitionColumns'] -%}
    {%- set desired_partitions = [] -%}
    {%- for column in config_column_list('partition_by') -%}
      {%- do desired_partitions.append(column | replace('`', '')) -%}
    {%- endfor -%}
    {%- if desired_partitions != (detail_before['partitionColumns'] | list) -%}
      {{ exceptions.raise_compiler_error(
          "Model " ~ model.unique_id ~ ": `partition_by` changed from " ~ (detail_before['partitionColumns'] | list)
          ~ " to " ~ desired_partitions ~ "; Delta cannot repartition a table in place. "
          ~ "Run it with --full-refresh.") }}
    {%- endif -%}
  {%- endif -%}
  {%- set desired_clustering = [] -%}
  {%- for column in config_column_list('liquid_clustered_by') -%}
    {%- do desired_clustering.append(column | replace('`', '')) -%}
  {%- endfor -%}
  {%- set statements = get_reconcile_delta_table_sql(
      relation, get_delta_table_properties(warn=true), current,
      desired_clustering, detail_before['clusteringColumns'] | list) -%}
  {%- for statement in statements -%}
    {%- do log(model.unique_id ~ ": " ~ statement, info=true) -%}
    {%- do run_query(statement) -%}
  {%- endfor -%}
  {%- if statements -%}
    {%- set detail_after = describe_detail(relation) -%}
    {%- set protocol_after = [detail_after['minReaderVersion'], detail_after['minWriterVersion'], detail_after['tableFeatures'] | list | sort] -%}
    {%- if protocol_after != [detail_before['minReaderVersion'], detail_before['minWriterVersion'], detail_before['tableFeatures'] | list | sort] -%}
      {%- do log(model.unique_id ~ ": " ~ relation ~ " now requires reader version " ~ protocol_after[0]
          ~ ", writer version " ~ protocol_after[1] ~ ", features " ~ protocol_after[2] | join(', '), info=true) -%}
    {%- endif -%}
    {{ return(detail_after) }}
  {%- endif -%}
  {{ return(detail_before) }}
{% endmacro %}
