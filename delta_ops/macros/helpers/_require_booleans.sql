{#- Each flag of `flags` ({argument: value}) must be true or false: else an error naming it. -#}
{% macro _require_booleans(operation, flags) %}
  {%- for name, flag in flags.items() if flag is not boolean -%}
    {{ exceptions.raise_compiler_error(
        "Invalid " ~ operation ~ " " ~ name ~ " " ~ (flag | string | tojson) ~ ": give true or false.") }}
  {%- endfor -%}
{% endmacro %}
