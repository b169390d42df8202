{#-
  A generic data test: the model has exactly the rows of `expected` (a seed of expected rows),
  each as many times, compared on the expected relation's columns (the model must have the same
  columns, in any order). Fails with the rows missing from the model and the rows it should not
  have. `except all` compares NULL with NULL as equal.
-#}
{% test equal_rows(model, expected) %}
  {%- set expected_columns = adapter.get_columns_in_relation(expected) | map(attribute='name') | list -%}
  {%- set model_columns = adapter.get_columns_in_relation(model) | map(attribute='name') | list -%}
  {%- if execute and (expected_columns | map('lower') | sort | list) != (model_columns | map('lower') | sort | list) -%}
    {{ exceptions.raise_compiler_error("equal_rows: " ~ model ~ " has the columns "
        ~ model_columns | join(', ') ~ "; " ~ expected ~ " has " ~ expected_columns | join(', ') ~ ".") }}
  {%- endif -%}
  {%- set columns = [] -%}
  {%- for column in expected_columns -%}{%- do columns.append(quote_identifier(column)) -%}{%- endfor -%}

with

model_rows as (
    select {{ columns | join(', ') }} from {{ model }}
),

expected_rows as (
    select {{ columns | join(', ') }} from {{ expected }}
),

missing as (
    select * from expected_rows
    except all
    select * from model_rows
),

unexpected as (
    select * from model_rows
    except all
    select * from expected_rows
),

final as (
    select
        'missing from the model' as difference,
        *
    from missing
    union all
    select
        'not expected' as difference,
        *
    from unexpected
)

select * from final
{% endtest %}
