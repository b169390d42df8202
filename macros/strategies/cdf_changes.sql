{#-
  The change rows of an upstream Delta table for a model with incremental_strategy='cdf':
  use it as a table, `select ... from {{ lakehouse.cdf_changes(ref('upstream')) }}`, and keep
  the columns _change_type, _commit_version and _cdf_watermark in the model's result.

  The end version is pinned when the model compiles. After a watermark: Delta's
  table_changes(upstream, watermark + 1, end) (no rows when the upstream has no new version).
  Without one (first run, --full-refresh): the upstream as of the end version, as 'snapshot'
  rows. When the upstream's history no longer reaches back to the watermark: an error, or a
  snapshot when the model sets cdf_on_gap='full_refresh'.
-#}
{% macro cdf_changes(upstream) %}
  {{ return(adapter.dispatch('cdf_changes', 'lakehouse')(upstream)) }}
{% endmacro %}

{% macro default__cdf_changes(upstream) %}
  {%- set name = lakehouse.safe_identifier(upstream.schema, 'cdf_changes schema') | replace('`', '')
      ~ '.' ~ lakehouse.safe_identifier(upstream.identifier, 'cdf_changes table') | replace('`', '') -%}
  {%- set name = name | lower -%}
  {%- if not execute or load_relation(upstream) is none -%}
    {#-- parsing, linting, compiling before the upstream is built: the shape only --#}
    {{ return(lakehouse._cdf_rows_sql(upstream, name, 0, 'snapshot')) }}
  {%- endif -%}

  {%- set on_gap = config.get('cdf_on_gap') or 'error' -%}
  {%- if on_gap not in ['error', 'full_refresh'] -%}
    {{ exceptions.raise_compiler_error(
        "Model " ~ model.name ~ ": cdf_on_gap=" ~ (on_gap | tojson) ~ " is not 'error' or 'full_refresh'.") }}
  {%- endif -%}

  {%- set versions = run_query('describe history ' ~ upstream).columns['version'].values() -%}
  {%- set end = versions | max -%}
  {%- set watermark = lakehouse.cdf_watermark(this) if is_incremental() else none -%}
  {%- set start = (watermark or {}).get(name) -%}
  {%- if start is not none and start + 1 < versions | min -%}
    {%- if on_gap == 'error' -%}
      {{ exceptions.raise_compiler_error(
          "Model " ~ model.name ~ ": upstream " ~ name ~ " keeps history from version "
          ~ (versions | min) ~ " only, but changes after version " ~ start ~ " are still to be "
          ~ "read. Rebuild with `dbt run --full-refresh -s " ~ model.name ~ "`, or set "
          ~ "cdf_on_gap='full_refresh' on the model.") }}
    {%- endif -%}
    {%- set start = none -%}
  {%- endif -%}

  {%- if start is none -%}
    {{ return(lakehouse._cdf_rows_sql(upstream, name, end, 'snapshot')) }}
  {%- elif start >= end -%}
    {{ return(lakehouse._cdf_rows_sql(upstream, name, end, 'none')) }}
  {%- else -%}
    {{ return(lakehouse._cdf_rows_sql(upstream, name, end, 'changes', start + 1)) }}
  {%- endif -%}
{% endmacro %}


{% macro _cdf_rows_sql(upstream, name, end, kind, start=none) -%}
  {%- set watermark = "'" ~ tojson({name: end}) ~ "' as _cdf_watermark" -%}
  {%- if kind == 'changes' -%}
(select *, {{ watermark }} from table_changes('{{ name }}', {{ start }}, {{ end }}))
  {%- elif kind == 'snapshot' -%}
(select
    *,
    'snapshot' as _change_type,
    cast({{ end }} as bigint) as _commit_version,
    cast(null as timestamp) as _commit_timestamp,
    {{ watermark }}
from {{ upstream }} version as of {{ end }})
  {%- else -%}
(select
    *,
    cast(null as string) as _change_type,
    cast(null as bigint) as _commit_version,
    cast(null as timestamp) as _commit_timestamp,
    {{ watermark }}
from {{ upstream }}
where false)
  {%- endif -%}
{%- endmacro %}
