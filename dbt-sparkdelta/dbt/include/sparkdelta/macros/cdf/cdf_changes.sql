{#-
  The change rows of an upstream Delta table for a model with incremental_strategy='cdf':
  use it as a table, `select ... from {{ cdf_changes(ref('upstream')) }}`, and keep the columns
  _change_type, _commit_version and _cdf_watermark in the model's result.

  What is read is decided by the adapter (adapter.cdf_read_plan, the same rule Python models
  follow through ChangeFeed): the end version is pinned when the model compiles; after a
  watermark, Delta's table_changes_by_path(upstream's location, watermark + 1, end) (no rows
  when the upstream has no new version; by path, so that the model may join the changes with
  the upstream by name: see adapter.cdf_read_plan); without one (first run, --full-refresh),
  the upstream as of the end version as 'snapshot' rows. When the upstream's history no longer reaches back to the watermark: an
  error, or a snapshot when the model sets cdf_on_gap='full_refresh'.
-#}
{% macro cdf_changes(upstream) %}
  {{ return(_cdf_rows_sql(upstream, _cdf_read_plan(upstream))) }}
{% endmacro %}


{#- What this run of the model reads of `upstream` (adapter.cdf_read_plan; cdf_changes and
    cdf_touched_rows). -#}
{% macro _cdf_read_plan(upstream) %}
  {%- if not execute or not upstream.schema or load_relation(upstream) is none -%}
    {#-- parsing, linting, compiling before the upstream is built, a unit test's fixture: the
         shape only, over the relation as it is (no version to read it at) --#}
    {{ return({'table': upstream | string, 'kind': 'snapshot', 'end': none}) }}
  {%- endif -%}
  {%- set target = this if is_incremental() else none -%}
  {{ return(adapter.cdf_read_plan(model.name, upstream, target, config.get('cdf_on_gap'))) }}
{% endmacro %}


{% macro _cdf_rows_sql(upstream, plan) -%}
  {%- set watermark = sql_string(tojson({plan.table: plan.end})) ~ " as _cdf_watermark" -%}
  {%- if plan.kind == 'changes' -%}
(select *, {{ watermark }} from table_changes_by_path({{ sql_string(plan.location) }}, {{ plan.start }}, {{ plan.end }}))
  {%- elif plan.kind == 'snapshot' -%}
(select
    *,
    'snapshot' as _change_type,
    cast({{ plan.end if plan.end is not none else 0 }} as bigint) as _commit_version,
    cast(null as timestamp) as _commit_timestamp,
    {{ watermark }}
from {{ upstream }}{% if plan.end is not none %} version as of {{ plan.end }}{% endif %})
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
