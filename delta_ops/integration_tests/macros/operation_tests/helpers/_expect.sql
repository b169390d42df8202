{#- One check of the operation tests: logs `operation tests: ok  <check>` and counts it in
    `checks`, or stops the run with what was expected and what the tables hold. -#}
{% macro _expect(checks, passed, check, got='') %}
  {%- if not passed -%}
    {{ exceptions.raise_compiler_error("operation tests: FAILED " ~ check
        ~ ((": got " ~ got) if got != '' else '')) }}
  {%- endif -%}
  {%- do checks.append(check) -%}
  {{ log("operation tests: ok  " ~ check, info=True) }}
{% endmacro %}
