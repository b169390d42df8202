{#- A config option that names columns (a string or a list), validated and quoted. -#}
{% macro config_column_list(option) %}
  {%- set columns = config.get(option) or [] -%}
  {%- if columns is string -%}{%- set columns = [columns] -%}{%- endif -%}
  {%- set quoted = [] -%}
  {%- for column in columns -%}
    {%- do quoted.append(safe_identifier(column, '`' ~ option ~ '` column of ' ~ model.unique_id)) -%}
  {%- endfor -%}
  {{ return(quoted) }}
{% endmacro %}
