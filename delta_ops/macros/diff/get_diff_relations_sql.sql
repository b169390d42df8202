{#-
  The text of a keyed data diff of relation `a` (before) with relation `b` (after) (Relations;
  `b` read as of `version` or `timestamp`, `a` as of `version_a` or `timestamp_a` when given).
  One full outer join of one scan of each side on the key, with a per-row hash of the compared
  columns on each side; returns text only (diff_relations validates, runs and reports). The
  join is on a struct of the key columns (NULLs match, as with <=>), or, with
  `mixed_key_types` (a key column's types differ between the sides), on each key column with
  <=>, which lets Spark coerce. A row is `removed` (in a only), `added` (in b only), `changed`
  or `unchanged`.

  - By default: one row of counts: duplicated_a and duplicated_b (not 0 when a key repeats on
    that side, and then the other counts mean nothing; a window over the join's own
    partitioning, no scan of its own), rows_a, rows_b, removed, added, changed, unchanged; per
    compared column i: both_null_<i> (matched rows where both are NULL), one_null_<i> (changed
    rows where one side is NULL), differ_<i> (changed rows where both have a value and the
    values differ); per column i of `summed_columns`: sum_a_<i>, sum_b_<i> and
    sum_difference_<i> (b - a) as text (NULL on overflow).
  - With `samples: N`: up to N rows of each kind other than unchanged, as `kind` and `sample` =
    JSON {"key": {column: value}, "columns": [changed columns], "values": [{"column", "a", "b"}
    of each changed column, values as text]}; the smallest keys first, or with `sample_order:
    'random'` a deterministic random choice (ordered by xxhash64 of the key and `seed`).
  - With `mismatches: true`: every row that is not unchanged: the key columns, `_diff_kind`
    (removed, added, changed), `_diff_columns` (the changed columns) and each compared column
    as `<column>__a` and `<column>__b` (for save_to).

  `key` and `columns` are column names (both sides have them). A compared column in
  `text_columns` is compared as text (its types differ between the sides); one in
  `numeric_columns` is equal when both are NULL or |a - b| <= `tolerance` (when `tolerance` is
  given; NULL against a value always differs). The row hash is xxhash64 over (is null, value)
  of each exactly compared column, so NULL, '' and 'NULL' all hash differently.
-#}
{% macro get_diff_relations_sql(a, b, key, columns, version=none, timestamp=none, tolerance=none,
    numeric_columns=none, text_columns=none, samples=none, version_a=none, timestamp_a=none,
    summed_columns=none, sample_order='key', seed=0, mismatches=false, mixed_key_types=false) %}
  {%- set as_of = delta_ops._time_travel_clause(version, timestamp, 'diff_relations of ' ~ b) -%}
  {%- set as_of_a = delta_ops._time_travel_clause(version_a, timestamp_a, 'diff_relations of ' ~ a) -%}
  {%- set numeric = (numeric_columns or []) | map('lower') | list if tolerance is not none else [] -%}
  {%- set text = (text_columns or []) | map('lower') | list -%}
  {%- set summed = summed_columns or [] -%}
  {%- set key_select, exact_parts, column_select, key_fields, on = [], [], [], [], [] -%}
  {%- for k in key -%}
    {%- do key_select.append(quote_identifier(k) ~ ' as __k' ~ loop.index0) -%}
    {%- do key_fields.append("'k" ~ loop.index0 ~ "', " ~ quote_identifier(k)) -%}
    {%- do on.append('a.__k' ~ loop.index0 ~ ' <=> b.__k' ~ loop.index0) -%}
  {%- endfor -%}
  {#- Structs of different field types do not compare: then each key column with <=>. -#}
  {%- set on = on if mixed_key_types else ['a.__j = b.__j'] -%}
  {#- The counts also count repeated keys: a window on the join key needs no shuffle of its own. -#}
  {%- set counts = not mismatches and samples is none -%}
  {%- set flags, tolerant_flags = [], [] -%}
  {%- for c in columns -%}
    {%- set i = loop.index0 -%}
    {%- set value = delta_ops._diff_value(c, c | lower in text) -%}
    {%- do column_select.append(value ~ ' as __c' ~ i) -%}
    {%- if c | lower in numeric -%}
      {%- set flag = 'not coalesce(try_subtract(a.__c' ~ i ~ ', b.__c' ~ i ~ ') between -' ~ tolerance
          ~ ' and ' ~ tolerance ~ ', a.__c' ~ i ~ ' is null and b.__c' ~ i ~ ' is null)' -%}
      {%- do tolerant_flags.append('__d' ~ i) -%}
    {%- else -%}
      {%- set flag = 'not (a.__c' ~ i ~ ' <=> b.__c' ~ i ~ ')' -%}
      {%- do exact_parts.append('__c' ~ i ~ ' is null, __c' ~ i) -%}
    {%- endif -%}
    {%- do flags.append(flag ~ ' as __d' ~ i) -%}
  {%- endfor -%}
  {#- The summed columns' own values (a column compared as text is summed as its own type). -#}
  {%- for c in summed -%}
    {%- do column_select.append(quote_identifier(c) ~ ' as __s' ~ loop.index0) -%}
  {%- endfor -%}
  {%- set row_hash = 'xxhash64(' ~ exact_parts | join(', ') ~ ')' if exact_parts else 'cast(0 as bigint)' -%}
  {%- set keys = [] -%}
  {%- for k in key -%}{%- do keys.append('__k' ~ loop.index0) -%}{%- endfor -%}
  {%- set side -%}
        select
            named_struct({{ key_fields | join(', ') }}) as __j,
            {{ key_select | join(',\n            ') }},
            true as __present{% for s in column_select %},
            {{ s }}{% endfor %}
        from {relation}
  {%- endset -%}
  {%- if counts -%}
    {%- set side = 'select *, count(*) over (partition by __j) as __n from (\n' ~ side ~ '\n)' -%}
  {%- endif -%}
  {%- set sql -%}
with
a_rows as (
{{ side | replace('{relation}', a ~ as_of_a) }}
),
b_rows as (
{{ side | replace('{relation}', b ~ as_of) }}
),
a as (select *, {{ row_hash }} as __hash from a_rows),
b as (select *, {{ row_hash }} as __hash from b_rows),
compared as (
    select
        a.__present as __in_a,
        b.__present as __in_b,
        {%- for k in key %}
        coalesce(a.__k{{ loop.index0 }}, b.__k{{ loop.index0 }}) as __k{{ loop.index0 }},
        {%- endfor %}
        {%- for f in flags %}
        {{ f }},
        a.__c{{ loop.index0 }} as __a{{ loop.index0 }},
        b.__c{{ loop.index0 }} as __b{{ loop.index0 }},
        {%- endfor %}
        {%- for c in summed %}
        a.__s{{ loop.index0 }} as __sa{{ loop.index0 }},
        b.__s{{ loop.index0 }} as __sb{{ loop.index0 }},
        {%- endfor %}
        {%- if counts %}
        a.__n as __na,
        b.__n as __nb,
        {%- endif %}
        a.__hash <> b.__hash as __hash_differs
    from a
    full outer join b
        on {{ on | join('\n        and ') }}
),
classified as (
    select
        *,
        case
            when __in_b is null then 'removed'
            when __in_a is null then 'added'
            when __hash_differs{% for t in tolerant_flags %} or {{ t }}{% endfor %} then 'changed'
            else 'unchanged'
        end as __kind
    from compared
)
{%- if mismatches %}
select
    {%- for k in key %}
    __k{{ loop.index0 }} as {{ quote_identifier(k) }},
    {%- endfor %}
    __kind as _diff_kind,
    case when __kind = 'changed' then {{ delta_ops._diff_changed_columns_sql(columns) }} else cast(array() as array<string>) end as _diff_columns{% for c in columns %},
    __a{{ loop.index0 }} as {{ quote_identifier(c ~ '__a') }},
    __b{{ loop.index0 }} as {{ quote_identifier(c ~ '__b') }}{% endfor %}
from classified
where __kind <> 'unchanged'
{%- elif samples is none %}
select
    count_if(__na > 1) as duplicated_a,
    count_if(__nb > 1) as duplicated_b,
    count_if(__in_a) as rows_a,
    count_if(__in_b) as rows_b,
    count_if(__kind = 'removed') as removed,
    count_if(__kind = 'added') as added,
    count_if(__kind = 'changed') as changed,
    count_if(__kind = 'unchanged') as unchanged{% for c in columns %},
    count_if(__in_a and __in_b and __a{{ loop.index0 }} is null and __b{{ loop.index0 }} is null) as both_null_{{ loop.index0 }},
    count_if(__kind = 'changed' and (__a{{ loop.index0 }} is null) <> (__b{{ loop.index0 }} is null)) as one_null_{{ loop.index0 }},
    count_if(__kind = 'changed' and __d{{ loop.index0 }} and __a{{ loop.index0 }} is not null and __b{{ loop.index0 }} is not null) as differ_{{ loop.index0 }}{% endfor %}{% for c in summed %},
    cast(try_sum(__sa{{ loop.index0 }}) as string) as sum_a_{{ loop.index0 }},
    cast(try_sum(__sb{{ loop.index0 }}) as string) as sum_b_{{ loop.index0 }},
    cast(try_subtract(try_sum(__sb{{ loop.index0 }}), try_sum(__sa{{ loop.index0 }})) as string) as sum_difference_{{ loop.index0 }}{% endfor %}
from classified
{%- else %},
ranked as (
    select
        __kind as kind,
        to_json(
            named_struct(
                'key', named_struct({% for k in key %}{{ delta_ops._diff_string(k) }}, __k{{ loop.index0 }}{{ ', ' if not loop.last }}{% endfor %}),
                'columns', case when __kind = 'changed' then {{ delta_ops._diff_changed_columns_sql(columns) }} else cast(array() as array<string>) end
                {%- if columns %},
                'values', case when __kind = 'changed' then filter(
                    array({% for c in columns %}
                        case when __d{{ loop.index0 }} then named_struct('column', {{ delta_ops._diff_string(c) }}, 'a', cast(__a{{ loop.index0 }} as string), 'b', cast(__b{{ loop.index0 }} as string)) end{{ ',' if not loop.last }}{% endfor %}
                    ),
                    x -> x is not null
                ) end
                {%- endif %}
            ),
            map('ignoreNullFields', 'false')
        ) as sample,
        row_number() over (
            partition by __kind order by {% if sample_order == 'random' %}xxhash64({{ keys | join(', ') }}, {{ seed | int }}), {% endif %}{{ keys | join(', ') }}
        ) as __n
    from classified
    where __kind <> 'unchanged'
)
select kind, sample from ranked where __n <= {{ samples | int }} order by kind, __n
{%- endif %}
  {%- endset -%}
  {{ return(sql) }}
{% endmacro %}

{#- SQL of the array of the compared columns that differ in a row of `classified`. -#}
{% macro _diff_changed_columns_sql(columns) %}
  {%- set parts = [] -%}
  {%- for c in columns -%}
    {%- do parts.append('case when __d' ~ loop.index0 ~ ' then ' ~ delta_ops._diff_string(c) ~ ' end') -%}
  {%- endfor -%}
  {{ return('filter(array(' ~ (parts + ['cast(null as string)']) | join(', ') ~ '), x -> x is not null)') }}
{% endmacro %}

{#- A compared column's value: as text when its types differ between the sides (Spark's hashes
    already treat -0.0 as 0.0, as <=> does). -#}
{% macro _diff_value(column, as_text) %}
  {%- if as_text -%}{{ return('cast(' ~ quote_identifier(column) ~ ' as string)') }}{%- endif -%}
  {{ return(quote_identifier(column)) }}
{% endmacro %}

{#- A SQL string literal of a column name (names from the data may hold quotes). -#}
{% macro _diff_string(value) %}
  {{ return("'" ~ (value | string).replace('\\', '\\\\').replace("'", "\\'") ~ "'") }}
{% endmacro %}
