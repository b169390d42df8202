{#-
  For a `cdf` model that recomputes each key a change touched, rather than trusting the
  change rows alone: use it as a table, `select ... from {{ cdf_touched_rows(source('x',
  'y'), 'id') }}`, with the same read as cdf_changes (one plan: the end version pinned when the
  model compiles, the watermark, cdf_on_gap).

  After a watermark it returns the change rows of the upstream since then (every
  `_change_type`: inserts, pre- and post-images of updates, deletes), followed by the
  upstream's CURRENT rows (as of the pinned end version) of every key those changes touch,
  typed `_change_type = 'current'` with `_commit_version` = the end version. A key touched by
  a change but without a current row was deleted upstream. Without a watermark (first run,
  --full-refresh) it returns the upstream as of the end version as 'snapshot' rows, as
  cdf_changes does; with no new version, no rows.

  So an update in place or a delete of an upstream row, not only an append, reaches the model:
  the model rebuilds the touched keys from their current rows, as a full refresh would.
  `unique_key`: a column name or a list of them (the upstream's key, matched null-safely).

  `fold_appends=true`, for a model whose rule is associative (its state from rows R and then I
  is its state from R combined with I, e.g. "the newest change wins"): a key whose change rows
  are all inserts keeps all of its earlier upstream rows, so it gets no current rows: its
  inserts are to be folded into the table's row of that key. Only the keys of pre-images and
  deletes (corrections, erasures, restores, overwrites) get their current rows, and the
  upstream is not read at all when the changes hold none (known from the commits' history
  when each one was an append; else a cheap query first, for which Delta reads only the
  rewriting commits' files). The model returns such a key's winning insert as
  `_change_type = 'insert'`, and its `matched_condition` (over DBT_INTERNAL_SOURCE and
  DBT_INTERNAL_DEST, the `cdf` MERGE's aliases) lets an insert replace the table's row only
  where it wins; it is required.
-#}
{% macro cdf_touched_rows(upstream, unique_key, fold_appends=false) %}
  {%- set keys = [] -%}
  {%- for key in ([unique_key] if unique_key is string else unique_key) -%}
    {%- do keys.append(quote_identifier(key)) -%}
  {%- endfor -%}
  {%- if not keys -%}
    {{ exceptions.raise_compiler_error(
        "Model " ~ model.name ~ ": cdf_touched_rows needs the upstream's key columns, e.g. "
        ~ "cdf_touched_rows(source('shop', 'orders'), 'order_id').") }}
  {%- endif -%}
  {#- (config.get answers nothing while dbt parses, and a unit test has a config of its own) -#}
  {%- if fold_appends and execute and model.resource_type == 'model' and not config.get('matched_condition') -%}
    {{ exceptions.raise_compiler_error(
        "Model " ~ model.name ~ ": cdf_touched_rows(..., fold_appends=true) returns a key's new "
        ~ "rows without its current ones, so the MERGE must apply a winning insert only where it "
        ~ "wins: set matched_condition, e.g. \"DBT_INTERNAL_SOURCE._change_type != 'insert' or "
        ~ "DBT_INTERNAL_SOURCE.updated_at > DBT_INTERNAL_DEST.updated_at\".") }}
  {%- endif -%}
  {%- set plan = _cdf_read_plan(upstream) -%}
  {%- if plan.kind != 'changes' -%}
    {{ return(_cdf_rows_sql(upstream, plan)) }}
  {%- endif -%}
  {%- set changes = _cdf_rows_sql(upstream, plan) -%}
  {%- set rewrites = "_change_type in ('update_preimage', 'delete')" -%}
  {%- if fold_appends -%}
    {%- set touched = '(select * from ' ~ changes ~ ' as changes where ' ~ rewrites ~ ')' -%}
    {%- if plan.appends_only or not run_query('select exists (select 1 from ' ~ touched ~ ' as rewrites) as found').rows[0]['found'] -%}
      {{ return(changes) }}
    {%- endif -%}
  {%- else -%}
    {%- set touched = changes -%}
  {%- endif -%}
  {%- set watermark = sql_string(tojson({plan.table: plan.end})) -%}
(select * from {{ changes }} as changes
union all
select
    current_rows.*,
    'current' as _change_type,
    cast({{ plan.end }} as bigint) as _commit_version,
    cast(null as timestamp) as _commit_timestamp,
    {{ watermark }} as _cdf_watermark
from {{ upstream }} version as of {{ plan.end }} as current_rows
left semi join {{ touched }} as touched
    on {% for key in keys %}current_rows.{{ key }} <=> touched.{{ key }}{% if not loop.last %} and {% endif %}{% endfor %})
{%- endmacro %}
