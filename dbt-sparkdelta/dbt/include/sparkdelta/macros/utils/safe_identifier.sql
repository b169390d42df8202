{#-
  Validate one identifier that comes from a config or an argument and return it quoted.
  Only letters, digits and underscores are accepted, so nothing can be injected through it.
  `what` names the option or argument in the error message.
-#}
{% macro safe_identifier(name, what='identifier') %}
  {%- if name is not string or not modules.re.fullmatch('[A-Za-z_][A-Za-z0-9_]*', name) -%}
    {{ exceptions.raise_compiler_error(
        "Invalid " ~ what ~ " " ~ (name | string | tojson) ~ ": use letters, digits and "
        ~ "underscores only (it must not start with a digit)."
    ) }}
  {%- endif -%}
  {{ return('`' ~ name ~ '`') }}
{% endmacro %}
