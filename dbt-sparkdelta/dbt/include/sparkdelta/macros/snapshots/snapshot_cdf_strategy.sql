{#-
  `strategy: cdf`: dbt's check strategy (check_cols, 'all' by default; hard_deletes as dbt has
  them), over the keys the upstream's change data feed names since the snapshot's last run
  rather than over the whole upstream. A key no commit touched has the same row as at that
  run, so the check strategy would find no change for it; a key a commit touched is compared
  as the check strategy compares it (its row changed, is new, or is gone: a hard delete). So
  the two give the same snapshot on every history, and only the touched keys' rows are
  compared and merged.

  The upstream is the snapshot's one ref or source (a YAML snapshot's `relation`, or the one
  table a SQL snapshot selects from, row by row); the unique_key columns are its columns.
  What is read comes from adapter.cdf_read_plan, the rule `cdf` models follow: after the
  snapshot's watermark, the changes up to the upstream's newest version; without one (the
  first run, or a snapshot the check strategy built) the whole upstream; a gap in the
  upstream's change feed is an error, or a whole read with cdf_on_gap='full_refresh'. The
  snapshot materialization commits the version read with the rows.
-#}
{% macro snapshot_cdf_strategy(node, snapshotted_rel, current_rel, model_config, target_exists) %}
  {%- set strategy = snapshot_check_strategy(node, snapshotted_rel, current_rel, model_config, target_exists) -%}
  {%- set upstream = _snapshot_cdf_upstream(node) -%}
  {%- set keys = [] -%}
  {%- set upstream_columns = adapter.get_columns_in_relation(upstream) | map(attribute='name') | map('lower') | list -%}
  {%- for key in ([strategy.unique_key] if strategy.unique_key is string else strategy.unique_key) -%}
    {%- if key | lower not in upstream_columns -%}
      {{ exceptions.raise_compiler_error(
          "Snapshot " ~ node.name ~ " (strategy 'cdf'): its unique_key " ~ tojson(key)
          ~ " is not a column of its upstream " ~ upstream ~ ". The cdf strategy finds the "
          ~ "changed rows by the upstream's key columns: set unique_key to them, or use "
          ~ "strategy 'check'.") }}
    {%- endif -%}
    {%- do keys.append(quote_identifier(key)) -%}
  {%- endfor -%}
  {%- set target = none -%}
  {%- if target_exists -%}
    {%- set target = api.Relation.create(schema=node.schema, identifier=node.alias, type='table') -%}
  {%- endif -%}
  {%- set plan = adapter.cdf_read_plan(node.name, upstream, target, config.get('cdf_on_gap')) -%}
  {%- do strategy.update({'cdf': {'upstream': upstream, 'keys': keys, 'plan': plan}}) -%}
  {{ return(strategy) }}
{% endmacro %}


{#- The one Delta table a `cdf` snapshot reads (its ref or source), or an error. -#}
{% macro _snapshot_cdf_upstream(node) %}
  {%- set upstreams = [] -%}
  {%- for unique_id in node.depends_on.nodes -%}
    {%- set upstream = graph.nodes.get(unique_id) or graph.sources.get(unique_id) -%}
    {%- if upstream -%}
      {%- do upstreams.append(api.Relation.create(
          schema=upstream.schema, identifier=upstream.get('alias') or upstream.identifier, type='table')) -%}
    {%- endif -%}
  {%- endfor -%}
  {%- if upstreams | length != 1 -%}
    {{ exceptions.raise_compiler_error(
        "Snapshot " ~ node.name ~ " (strategy 'cdf') reads " ~ upstreams | length
        ~ " tables; the cdf strategy follows the change data feed of one, row by row: snapshot "
        ~ "one ref or source (relation: ref('...')), or use strategy 'check'.") }}
  {%- endif -%}
  {{ return(upstreams[0]) }}
{% endmacro %}


{#-
  The staging rows of a `cdf` snapshot (dbt's snapshot_staging_table) as a temporary view of
  the session (the read of table_changes cannot be in a permanent one). After the watermark
  they are over the keys the upstream's changes touched only: the query's rows of those keys,
  and the snapshot's current rows of those keys (the temporary view
  `<snapshot>__dbt_cdf_scope`, read in place of the snapshot), so a touched key missing from
  the query is a hard delete and an untouched one is not.
-#}
{% macro _snapshot_cdf_staging_table(strategy, source_sql, target_relation) %}
  {%- set cdf = strategy.cdf -%}
  {%- set target = target_relation -%}
  {%- if cdf.plan.kind == 'changes' -%}
    {#-- by path (the plan's location): the snapshot's query reads the table by name, and
         with table_changes('<name>', ...) beside it every row would count as touched --#}
    {%- set touched -%}
(select distinct {{ cdf['keys'] | join(', ') }}
from table_changes_by_path({{ sql_string(cdf.plan.location) }}, {{ cdf.plan.start }}, {{ cdf.plan.end }}))
    {%- endset -%}
    {%- set target = _snapshot_cdf_scope(target_relation) -%}
    {%- call statement('build_snapshot_cdf_scope') -%}
create or replace temporary view {{ target }} as
{{ _snapshot_cdf_touched_rows('select * from ' ~ target_relation, cdf['keys'], touched) }}
    {%- endcall -%}
    {%- set source_sql = _snapshot_cdf_touched_rows(source_sql, cdf['keys'], touched) -%}
  {%- endif -%}
  {%- set staging = target_relation.incorporate(path={'identifier': target_relation.identifier ~ '__dbt_tmp'}, type='view').include(database=false, schema=false) -%}
  {%- call statement('build_snapshot_staging_relation') -%}
create or replace temporary view {{ staging }} as
{{ snapshot_staging_table(strategy, source_sql, target) }}
  {%- endcall -%}
  {{ return(staging) }}
{% endmacro %}


{#- The rows of `sql` whose key columns match a row of `touched` (null-safely). -#}
{% macro _snapshot_cdf_touched_rows(sql, keys, touched) -%}
select dbt_cdf_rows.* from (
{{ sql }}
) as dbt_cdf_rows
left semi join {{ touched }} as dbt_cdf_touched
    on {% for key in keys %}dbt_cdf_rows.{{ key }} <=> dbt_cdf_touched.{{ key }}{% if not loop.last %} and {% endif %}{% endfor %}
{%- endmacro %}


{% macro _snapshot_cdf_scope(target_relation) %}
  {{ return(target_relation.incorporate(path={'identifier': target_relation.identifier ~ '__dbt_cdf_scope'}, type='view').include(database=false, schema=false)) }}
{% endmacro %}
