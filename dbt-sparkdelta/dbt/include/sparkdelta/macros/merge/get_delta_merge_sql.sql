{#-
  MERGE INTO for Delta (pure: returns text). `options` holds the model's merge config:
    unique_key                       column or list; matched null-safely (<=>), quoted; without
                                     one nothing matches and every source row is inserted (dbt's
                                     merge semantics)
    source_alias / target_alias      defaults DBT_INTERNAL_SOURCE / DBT_INTERNAL_DEST
    matched_delete_condition         WHEN MATCHED AND <cond> THEN DELETE (before the update)
    matched_condition                extra condition of the update
    not_matched_condition            condition of the insert
    not_matched_by_source_action     'delete' or 'update' (WHEN NOT MATCHED BY SOURCE)
    not_matched_by_source_condition  its condition
    not_matched_by_source_set        {column: expression} for the 'update' action
    skip_matched_step / skip_not_matched_step
    merge_update_columns / merge_exclude_columns
    merge_with_schema_evolution      MERGE WITH SCHEMA EVOLUTION: new source columns join the
                                     target (through `set *` / `insert *`)
    merge_skip_unchanged             default true: rows whose values are all equal are not
                                     updated, so a rerun makes no change-data rows (and, with
                                     deletion vectors, no commit)
  `target_columns` / `source_columns` are column names of both sides (for the explicit update
  list and the unchanged check); `predicates` are incremental predicates on the target.
-#}
{% macro get_delta_merge_sql(target, source, options, target_columns, source_columns, predicates=none) -%}
  {%- set model_id = options.get('model_id', 'this model') -%}
  {%- set src = safe_identifier(options.get('source_alias') or 'DBT_INTERNAL_SOURCE', 'source_alias of ' ~ model_id) -%}
  {%- set tgt = safe_identifier(options.get('target_alias') or 'DBT_INTERNAL_DEST', 'target_alias of ' ~ model_id) -%}
  {%- set unique_key = options.get('unique_key') -%}
  {%- set keys = ([unique_key] if unique_key is string else unique_key) if unique_key else [] -%}
  {%- if options.get('skip_matched_step') and options.get('skip_not_matched_step') -%}
    {{ exceptions.raise_compiler_error(
        "Model " ~ model_id ~ ": `skip_matched_step` and `skip_not_matched_step` are both true, "
        ~ "so the merge would do nothing. Set at most one of them.") }}
  {%- endif -%}
  {%- set by_source_action = options.get('not_matched_by_source_action') -%}
  {%- if by_source_action not in (none, 'delete', 'update') -%}
    {{ exceptions.raise_compiler_error(
        "Model " ~ model_id ~ ": `not_matched_by_source_action` must be 'delete' or 'update', got '"
        ~ by_source_action ~ "'.") }}
  {%- endif -%}
  {%- if by_source_action == 'update' and not options.get('not_matched_by_source_set') -%}
    {{ exceptions.raise_compiler_error(
        "Model " ~ model_id ~ ": `not_matched_by_source_action: update` needs "
        ~ "`not_matched_by_source_set` ({column: expression}).") }}
  {%- endif -%}
  {%- if options.get('merge_update_columns') and options.get('merge_exclude_columns') -%}
    {{ exceptions.raise_compiler_error(
        "Model " ~ model_id ~ ": set `merge_update_columns` or `merge_exclude_columns`, not both.") }}
  {%- endif -%}

  {%- set on = [] -%}
  {%- for key in keys -%}
    {%- set column = safe_identifier(key, 'unique_key of ' ~ model_id) -%}
    {%- do on.append(src ~ '.' ~ column ~ ' <=> ' ~ tgt ~ '.' ~ column) -%}
  {%- endfor -%}
  {%- for predicate in predicates or [] -%}
    {%- do on.append('(' ~ predicate ~ ')') -%}
  {%- endfor -%}
  {%- if not keys -%}
    {#- no key: no source row matches a target row, so each is inserted -#}
    {%- set on = ['false'] -%}
  {%- endif -%}

  {%- set target_names = target_columns | map('lower') | list -%}
  {%- set source_names = source_columns | map('lower') | list -%}
  {%- set update_columns = [] -%}
  {%- set explicit = options.get('merge_update_columns') or [] -%}
  {%- set excluded = (options.get('merge_exclude_columns') or []) | map('lower') | list -%}
  {#- target columns the new data no longer has (on_schema_change append_new_columns / ignore)
      are left as they are on update and NULL on insert -#}
  {%- set shared_columns = [] -%}
  {%- for column in target_columns if column | lower in source_names -%}
    {%- do shared_columns.append(column) -%}
  {%- endfor -%}
  {%- set missing_in_source = target_columns | length > shared_columns | length -%}
  {%- for column in (explicit or shared_columns) -%}
    {%- if column | lower not in excluded -%}
      {%- do update_columns.append(column) -%}
    {%- endif -%}
  {%- endfor -%}
  {%- set update_all = not explicit and not excluded -%}

  {%- set matched_conditions = [] -%}
  {%- if options.get('matched_condition') -%}
    {%- do matched_conditions.append('(' ~ options.get('matched_condition') ~ ')') -%}
  {%- endif -%}
  {#- Only when every updated column exists on both sides can "unchanged" be decided. -#}
  {%- set new_columns = source_names | reject('in', target_names) | list -%}
  {%- if options.get('merge_skip_unchanged', true) and not new_columns -%}
    {%- set equal = [] -%}
    {%- for column in update_columns if column | lower not in keys | map('lower') | list -%}
      {%- set quoted = _merge_column(column, explicit, model_id) -%}
      {%- do equal.append(src ~ '.' ~ quoted ~ ' <=> ' ~ tgt ~ '.' ~ quoted) -%}
    {%- endfor -%}
    {%- if equal -%}
      {%- do matched_conditions.append('not (' ~ equal | join(' and ') ~ ')') -%}
    {%- endif -%}
  {%- endif -%}

  merge {{ 'with schema evolution ' if options.get('merge_with_schema_evolution') }}into {{ target }} as {{ tgt }}
  using {{ source }} as {{ src }}
  on {{ on | join('\n    and ') }}
  {%- if options.get('matched_delete_condition') %}
  when matched and ({{ options.get('matched_delete_condition') }}) then delete
  {%- endif %}
  {%- if not options.get('skip_matched_step') %}
  when matched{{ ' and ' ~ matched_conditions | join(' and ') if matched_conditions }} then update set
    {#- with new source columns (schema evolution) only `set *` adds them to the target -#}
    {%- if update_all and new_columns %} *
    {%- else %}
    {%- for column in update_columns %}
    {%- set quoted = _merge_column(column, explicit, model_id) %}
    {{ tgt }}.{{ quoted }} = {{ src }}.{{ quoted }}{{ ',' if not loop.last }}
    {%- endfor %}
    {%- endif %}
  {%- endif %}
  {%- if not options.get('skip_not_matched_step') %}
  when not matched{{ ' and (' ~ options.get('not_matched_condition') ~ ')' if options.get('not_matched_condition') }} then insert
    {%- if missing_in_source and not new_columns %}
    {%- set inserted = [] -%}
    {%- for column in shared_columns -%}{%- do inserted.append(quote_identifier(column)) -%}{%- endfor %}
    ({{ inserted | join(', ') }})
    values ({% for column in inserted %}{{ src }}.{{ column }}{{ ', ' if not loop.last }}{% endfor %})
    {%- else %} *
    {%- endif %}
  {%- endif %}
  {%- if by_source_action %}
  when not matched by source{{ ' and (' ~ options.get('not_matched_by_source_condition') ~ ')' if options.get('not_matched_by_source_condition') }} then
    {%- if by_source_action == 'delete' %} delete
    {%- else %} update set
    {%- for column, expression in options.get('not_matched_by_source_set').items() %}
    {{ tgt }}.{{ safe_identifier(column) }} = {{ expression }}{{ ',' if not loop.last }}
    {%- endfor %}
    {%- endif %}
  {%- endif %}
{%- endmacro %}


{#- A column named in the model's config is checked; one read from the table is only quoted. -#}
{% macro _merge_column(column, from_config, model_id) -%}
  {{ return(safe_identifier(column, 'merge_update_columns of ' ~ model_id) if from_config else quote_identifier(column)) }}
{%- endmacro %}
