{#-
  An existing seed table. A Delta seed (the default) is replaced in place by
  CREATE OR REPLACE TABLE: it keeps its history and time travel, and readers never find it
  missing. Another file format keeps dbt-spark's drop and create. Values are checked first.
-#}
{% macro sparkdelta__reset_csv_table(model, full_refresh, old_relation, agate_table) %}
  {%- do sparkdelta__check_csv_values(model, agate_table) -%}
  {%- if not (old_relation.is_delta and config.get('file_format') == 'delta') -%}
    {{ return(spark__reset_csv_table(model, full_refresh, old_relation, agate_table)) }}
  {%- endif -%}
  {%- set column_override = model['config'].get('column_types', {}) -%}
  {%- set quote_seed_column = model['config'].get('quote_columns', None) -%}
  {%- set sql -%}
    create or replace table {{ this.render() }} (
      {%- for col_name in agate_table.column_names -%}
        {%- set type = column_override.get(col_name, adapter.convert_type(agate_table, loop.index0)) -%}
        {{ adapter.quote_seed_column(col_name | string, quote_seed_column) }} {{ type }}
        {%- if not loop.last -%}, {% endif -%}
      {%- endfor -%}
    )
    {{ file_format_clause() }}
    {{ partition_cols(label="partitioned by") }}
    {{ location_clause() }}
    {{ comment_clause() }}
  {%- endset -%}
  {%- call statement('_') -%}{{ sql }}{%- endcall -%}
  {{ return(sql) }}
{% endmacro %}
