{#-
  The write of one incremental run for a Delta model (returns text; reads nothing but the source's
  key bounds under merge_prune_target), by strategy:
    merge             MERGE INTO (see get_delta_merge_sql)
    append            INSERT INTO
    insert_overwrite  INSERT OVERWRITE (dynamic partition overwrite when partition_by is set)
    replace_where     INSERT INTO ... REPLACE WHERE <incremental_predicates>
    delete+insert     INSERT INTO after get_delete_matching_keys_sql removed the keys
    microbatch        INSERT INTO ... REPLACE WHERE <event_time within the batch>
-#}
{% macro get_incremental_strategy_sql(strategy, source, target, target_columns, source_columns) -%}
  {%- set predicates = config.get('incremental_predicates') or config.get('predicates') or [] -%}
  {%- if predicates is string -%}{%- set predicates = [predicates] -%}{%- endif -%}
  {#- identity and generated columns the SELECT does not give are Delta's to fill in -#}
  {%- set computed = [] -%}
  {%- for option in ['identity_columns', 'generated_columns'] -%}
    {%- set names = config.get(option) or [] -%}
    {%- for name in ([names] if names is string else names) -%}{%- do computed.append(name | lower) -%}{%- endfor -%}
  {%- endfor -%}
  {%- set source_names = source_columns | map('lower') | list -%}
  {%- set column_list = [] -%}
  {%- for column in target_columns if column | lower in source_names or column | lower not in computed -%}
    {%- do column_list.append(quote_identifier(column)) -%}
  {%- endfor -%}
  {%- set select_columns = 'select ' ~ column_list | join(', ') ~ ' from ' ~ source -%}

  {%- if strategy == 'merge' -%}
    {%- set options = {'model_id': model.unique_id} -%}
    {%- for option in merge_options() -%}
      {%- do options.update({option: config.get(option)}) -%}
    {%- endfor -%}
    {%- do options.update({'merge_skip_unchanged': config.get('merge_skip_unchanged', true)}) -%}
    {%- if config.get('merge_prune_target') and options.unique_key -%}
      {#- the one step that reads: the bounds of this run's source keys -#}
      {%- set keys = [options.unique_key] if options.unique_key is string else options.unique_key -%}
      {%- set predicates = predicates + get_merge_key_bounds(source, target, keys,
          options.target_alias or 'DBT_INTERNAL_DEST', model.unique_id) -%}
    {%- endif -%}
    {{ get_delta_merge_sql(target, source, options, target_columns, source_columns, predicates) }}
  {%- elif strategy in ('append', 'delete+insert') -%}
    insert into {{ target }} ({{ column_list | join(', ') }})
    {{ select_columns }}
  {%- elif strategy == 'insert_overwrite' -%}
    insert overwrite table {{ target }}
    {{ select_columns }}
  {%- elif strategy == 'replace_where' -%}
    {%- if not predicates -%}
      {{ exceptions.raise_compiler_error(
          "Model " ~ model.unique_id ~ ": incremental_strategy 'replace_where' needs "
          ~ "`incremental_predicates`: the condition of the rows the run replaces.") }}
    {%- endif -%}
    insert into {{ target }} replace where {{ predicates | join(' and ') }}
    {{ select_columns }}
  {%- elif strategy == 'microbatch' -%}
    {%- set event_time = safe_identifier(config.get('event_time'), 'event_time of ' ~ model.unique_id) -%}
    insert into {{ target }} replace where
        {{ event_time }} >= timestamp {{ sql_string(model.batch.event_time_start) }}
        and {{ event_time }} < timestamp {{ sql_string(model.batch.event_time_end) }}
    {{ select_columns }}
  {%- endif -%}
{%- endmacro %}
