{#-
  A relation read as of a version or timestamp, for models and analyses:
  `select * from {{ relation_as_of(ref('fct_orders'), version=3) }}`.
  `relation` is a Relation (ref/source) or a 'schema.table' name.
-#}
{% macro relation_as_of(relation, version=none, timestamp=none) %}
  {%- do delta_ops._require_sparkdelta('relation_as_of') -%}
  {%- if relation is string -%}{%- set relation = delta_ops.relation_from_name(relation) -%}{%- endif -%}
  {%- if version is none and timestamp is none -%}
    {{ exceptions.raise_compiler_error(
        "relation_as_of(" ~ relation ~ "): give version or timestamp.") }}
  {%- endif -%}
  {{ return(relation ~ delta_ops._time_travel_clause(version, timestamp, 'relation_as_of(' ~ relation ~ ')')) }}
{% endmacro %}
