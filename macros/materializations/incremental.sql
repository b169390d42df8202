{#-
  The incremental materialization of the sparkdelta adapter: dbt-spark's, plus the `cdf`
  strategy. dbt-spark's materialization only knows its own strategies and writes the first run
  and full refreshes itself; `cdf` must write those too (the watermark goes in the same commit
  as the data), so it takes the whole run: the model's change rows are built here (dbt submits
  Python models only from a materialization's own statement), lakehouse.cdf_incremental applies
  them. Every other strategy runs dbt-spark's materialization unchanged.
-#}
{% materialization incremental, adapter='sparkdelta', supported_languages=['sql', 'python'] -%}
  {%- if config.get('incremental_strategy') != 'cdf' -%}
    {{ return(materialization_incremental_spark()) }}
  {%- endif -%}
  {%- set language = model['language'] -%}
  {%- set tmp_relation = this.incorporate(path={'identifier': this.identifier ~ '__dbt_tmp'}) -%}
  {%- if language == 'sql' -%}
    {%- set tmp_relation = tmp_relation.include(database=false, schema=false) -%}
  {%- endif -%}

  {{ run_hooks(pre_hooks) }}
  {#-- The change rows. For a Python model this is 'main': it records the submission method. --#}
  {%- call statement('main' if language == 'python' else 'create_tmp_relation', language=language) -%}
    {{ create_table_as(True, tmp_relation, compiled_code, language) }}
  {%- endcall -%}
  {%- do lakehouse.cdf_incremental(tmp_relation, language) -%}
  {{ run_hooks(post_hooks) }}
  {{ return({'relations': [this.incorporate(type='table')]}) }}
{%- endmaterialization %}
