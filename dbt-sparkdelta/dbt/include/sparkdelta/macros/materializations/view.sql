{#-
  Views as dbt-spark makes them: one atomic CREATE OR REPLACE VIEW. Named for this adapter
  because `dbt clone` re-uses the view materialization it finds by the adapter's own name
  (materialization_view_<type>, dbt-core#7799) and otherwise takes dbt's default: a temporary
  view, two renames and a drop, during which the view does not exist.
-#}
{% materialization view, adapter='sparkdelta' -%}
    {{ return(create_or_replace_view()) }}
{%- endmaterialization %}
