{#-
  The MERGE condition under which a source change replaces the merged state of its key: it is
  newer (`updated_at`), or as new and from a later batch. The same order as the ranking of the
  silver models, so merging batch by batch gives what one full build gives.
-#}
{% macro newer_change_condition(source='DBT_INTERNAL_SOURCE', target='DBT_INTERNAL_DEST') -%}
    {{ source }}.updated_at > {{ target }}.updated_at
    or ({{ source }}.updated_at = {{ target }}.updated_at and {{ source }}.batch_id > {{ target }}.batch_id)
{%- endmacro %}
