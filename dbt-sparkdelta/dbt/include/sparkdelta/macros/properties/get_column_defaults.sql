{#-
  A model's `column_defaults` config ({column: SQL expression}, e.g. {status: "'new'"}),
  validated: a mapping of column names to non-empty expressions, or a compile error naming
  the model.
-#}
{% macro get_column_defaults(model_node, model_config) %}
  {%- set defaults = model_config.get('column_defaults') or {} -%}
  {%- if defaults is not mapping -%}
    {{ exceptions.raise_compiler_error(
        "Model " ~ model_node.unique_id ~ ": `column_defaults` must map column names to SQL "
        ~ "expressions, e.g. {status: \"'new'\"}; got " ~ (defaults | string)) }}
  {%- endif -%}
  {%- set found = {} -%}
  {%- for column, expression in defaults.items() -%}
    {%- do safe_identifier(column, 'column_defaults of ' ~ model_node.unique_id) -%}
    {%- if expression is none or (expression | string | trim) == '' -%}
      {{ exceptions.raise_compiler_error(
          "Model " ~ model_node.unique_id ~ ": `column_defaults` of " ~ column ~ " is empty; "
          ~ "give a SQL expression such as 0, 'text' or current_timestamp().") }}
    {%- endif -%}
    {%- do found.update({column | lower: expression | string | trim}) -%}
  {%- endfor -%}
  {{ return(found) }}
{% endmacro %}
