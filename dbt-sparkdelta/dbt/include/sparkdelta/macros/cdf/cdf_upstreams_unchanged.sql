{#-
  True when an incremental run of this `cdf` model would read nothing new: none of the tables
  it declares (ref, source) has a commit after the versions its table's watermark records, and
  every one of them is in that watermark (see adapter.cdf_upstreams_unchanged). The run then
  skips the model: no change rows are built, nothing is written, and it costs one DESCRIBE
  HISTORY ... LIMIT 1 per table. Never on a full build, nor when an upstream has no relation of
  its own (an ephemeral model): the model runs and finds out itself.
-#}
{% macro cdf_upstreams_unchanged(target_relation) %}
  {%- set upstreams = [] -%}
  {%- for unique_id in model.depends_on.nodes -%}
    {%- set node = graph.nodes.get(unique_id) or graph.sources.get(unique_id) -%}
    {%- if node is none or not node.get('relation_name') -%}
      {{ return(false) }}
    {%- endif -%}
    {%- do upstreams.append(node['relation_name']) -%}
  {%- endfor -%}
  {{ return(adapter.cdf_upstreams_unchanged(model.name, target_relation, upstreams)) }}
{% endmacro %}
