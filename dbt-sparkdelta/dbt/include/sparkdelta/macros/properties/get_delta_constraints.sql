{#-
  NOT NULL and CHECK constraints declared with dbt's `constraints` (on the model or its
  columns), as {name: boolean SQL expression}. A NOT NULL constraint becomes the CHECK
  `<column> is not null`: Delta refuses to make an existing nullable column NOT NULL and a CTAS
  cannot declare column nullability, while a CHECK constraint can be in the first commit and be
  added or dropped later. `primary_key`, `foreign_key` and `unique` constraints, which Delta
  cannot enforce, are left to get_unenforced_constraints (stored as table properties, with a
  warning); any other type is a compile error.
-#}
{% macro get_delta_constraints(model_node) %}
  {%- set found = {} -%}
  {%- set declared = get_declared_constraints(model_node) -%}

  {%- for column_name, constraint in declared -%}
    {%- set kind = constraint.get('type') -%}
    {%- if kind == 'not_null' -%}
      {%- set columns = [column_name] if column_name else (constraint.get('columns') or []) -%}
      {%- for name in columns -%}
        {%- set quoted = safe_identifier(name, 'not_null column of ' ~ model_node.unique_id) -%}
        {%- do found.update({(constraint.get('name') or name ~ '_not_null'): quoted ~ ' is not null'}) -%}
      {%- endfor -%}
    {%- elif kind == 'check' -%}
      {%- if not constraint.get('expression') -%}
        {{ exceptions.raise_compiler_error(
            "Model " ~ model_node.unique_id ~ ": a check constraint needs an `expression`.") }}
      {%- endif -%}
      {%- set name = constraint.get('name') or 'check_' ~ local_md5(constraint.get('expression'))[:8] -%}
      {%- do safe_identifier(name, 'constraint name of ' ~ model_node.unique_id) -%}
      {%- do found.update({name: constraint.get('expression')}) -%}
    {%- elif kind not in ['primary_key', 'foreign_key', 'unique'] -%}
      {{ exceptions.raise_compiler_error(
          "Model " ~ model_node.unique_id ~ ": constraint type `" ~ kind ~ "` is not supported; "
          ~ "use not_null, check, primary_key, foreign_key or unique.") }}
    {%- endif -%}
  {%- endfor -%}
  {{ return(found) }}
{% endmacro %}
