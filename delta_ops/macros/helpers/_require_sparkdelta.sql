{#- Refuse another adapter, first thing in every operation and in the macros models call: the
    rest of delta_ops needs the sparkdelta adapter's macros (describe_detail, safe_identifier,
    ...) and its try_execute, and would otherwise fail on a missing name. -#}
{% macro _require_sparkdelta(what=none) %}
  {%- if adapter.type() != 'sparkdelta' -%}
    {{ exceptions.raise_compiler_error(
        (what ~ ": " if what else "") ~ "delta_ops needs the dbt-sparkdelta adapter (a profile "
        ~ "with `type: sparkdelta`); this target's type is " ~ adapter.type() ~ ".") }}
  {%- endif -%}
{% endmacro %}
