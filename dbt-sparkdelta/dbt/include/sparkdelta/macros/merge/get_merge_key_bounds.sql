{#-
  `merge_prune_target: true`: target-side predicates on the unique key, from the keys of this
  run's source, added to the MERGE's ON clause. Open-source Delta has no dynamic file pruning,
  so a plain MERGE reads every file of the target to find the matches; with literal bounds
  (`key between <min> and <max>`) or, for at most `merge_prune_key_list_max` keys (default 100),
  the literal key list (`key in (...)`), Delta's data skipping leaves out the files that cannot
  hold a source key. Results are unchanged: a target row outside the bounds cannot match. The
  source is read once more for the bounds (one small aggregate).
  Returns [] for keys of a type without literal bounds (only integers, decimals, strings, dates
  and timestamps have them).
-#}
{% macro get_merge_key_bounds(source, target, keys, target_alias, model_id) %}
  {%- if config.get('not_matched_by_source_action') -%}
    {{ exceptions.raise_compiler_error(
        "Model " ~ model_id ~ ": merge_prune_target cannot be combined with "
        ~ "not_matched_by_source_action: target rows outside the source's keys would count as "
        ~ "not matched by source. Drop one of the two.") }}
  {%- endif -%}
  {%- set list_max = config.get('merge_prune_key_list_max', 100) -%}
  {%- if list_max is not integer or list_max < 0 -%}
    {{ exceptions.raise_compiler_error(
        "Model " ~ model_id ~ ": merge_prune_key_list_max must be a whole number >= 0, got "
        ~ (list_max | string | tojson) ~ ".") }}
  {%- endif -%}
  {%- set types = {} -%}
  {%- for column in adapter.get_columns_in_relation(target) -%}
    {%- do types.update({column.name | lower: column.dtype | lower}) -%}
  {%- endfor -%}
  {%- set predicates = [] -%}
  {%- for key in keys -%}
    {%- set dtype = types.get(key | lower, '') -%}
    {%- set literal_kind = _bound_literal_kind(dtype) -%}
    {%- if literal_kind -%}
      {%- set column = safe_identifier(key, 'unique_key of ' ~ model_id) -%}
      {%- set bounds = run_query(
          'select cast(min(' ~ column ~ ') as string) as lo, cast(max(' ~ column ~ ') as string) as hi, '
          ~ 'count(distinct ' ~ column ~ ') as n, count_if(' ~ column ~ ' is null) as nulls, '
          ~ 'case when count(distinct ' ~ column ~ ') <= ' ~ list_max ~ ' then to_json(collect_set(cast('
          ~ column ~ ' as string))) end as keys from ' ~ source).rows[0] -%}
      {%- set target_column = target_alias ~ '.' ~ column -%}
      {%- if bounds['n'] == 0 -%}
        {%- set term = 'false' -%}
      {%- elif bounds['keys'] is not none -%}
        {%- set literals = [] -%}
        {%- for value in fromjson(bounds['keys']) | sort -%}
          {%- do literals.append(_bound_literal(literal_kind, value)) -%}
        {%- endfor -%}
        {%- set term = target_column ~ ' in (' ~ literals | join(', ') ~ ')' -%}
      {%- else -%}
        {%- set term = target_column ~ ' between ' ~ _bound_literal(literal_kind, bounds['lo'])
            ~ ' and ' ~ _bound_literal(literal_kind, bounds['hi']) -%}
      {%- endif -%}
      {#- a NULL key of the source matches a NULL key of the target (<=>) -#}
      {%- if bounds['nulls'] > 0 -%}
        {%- set term = term ~ ' or ' ~ target_column ~ ' is null' -%}
      {%- endif -%}
      {%- do predicates.append(term) -%}
    {%- endif -%}
  {%- endfor -%}
  {{ return(predicates) }}
{% endmacro %}

{#- 'number', 'string', 'date' or 'timestamp' for a Spark type with literal bounds, else ''. -#}
{% macro _bound_literal_kind(dtype) %}
  {%- if dtype in ('tinyint', 'smallint', 'int', 'integer', 'bigint') or dtype.startswith('decimal') -%}
    {{ return('number') }}
  {%- elif dtype in ('string', 'date', 'timestamp') or dtype.startswith('varchar') or dtype.startswith('char') -%}
    {{ return({'date': 'date', 'timestamp': 'timestamp'}.get(dtype, 'string')) }}
  {%- endif -%}
  {{ return('') }}
{% endmacro %}

{#- A parse-time literal (Delta's data skipping needs literals, not casts). -#}
{% macro _bound_literal(kind, value) %}
  {%- if kind == 'number' -%}
    {%- if not modules.re.fullmatch('-?[0-9]+(\\.[0-9]+)?', value) -%}
      {{ exceptions.raise_compiler_error("merge_prune_target: unexpected key value " ~ value) }}
    {%- endif -%}
    {{ return(value) }}
  {%- elif kind == 'string' -%}
    {{ return(sql_string(value)) }}
  {%- endif -%}
  {{ return(kind ~ ' ' ~ sql_string(value)) }}
{% endmacro %}
