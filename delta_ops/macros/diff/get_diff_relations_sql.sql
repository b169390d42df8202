{#-
  The text of a keyed data diff of relation `a` with relation `b` (Relations; `b` read as of
  `version` or `timestamp` when given). One full outer join of one scan of each side on the key,
  compared null-safely (<=>), with a per-row hash of the compared columns on each side; returns
  text only (diff_relations validates, runs and reports).

  - Without `samples`: one row of counts: rows_a, rows_b, only_in_a, only_in_b, changed,
    unchanged, and changed_<i> = the changed rows whose i-th column of `columns` differs.
  - With `samples: N`: up to N rows of each kind other than unchanged (the smallest keys), as
    `kind` and `sample` = JSON {"key": {column: value}, "columns": [changed columns]}.

  `key` and `columns` are column names (both sides have them). A compared column in
  `text_columns` is compared as text (its types differ between the sides); one in
  `numeric_columns` is equal when both are NULL or |a - b| <= `tolerance` (when `tolerance` is
  given; NULL against a value always differs). The row hash is xxhash64 over (is null, value)
  of each exactly compared column, so NULL, '' and 'NULL' all hash differently.
-#}
{% macro get_diff_relations_sql(a, b, key, columns, version=none, timestamp=none, tolerance=none,
    numeric_columns=none, text_columns=none, samples=none) %}
  {%- set as_of = delta_ops._time_travel_clause(version, timestamp, 'diff_relations of ' ~ b) -%}
  {%- set numeric = (numeric_columns or []) | map('lower') | list if tolerance is not none else [] -%}
  {%- set text = (text_columns or []) | map('lower') | list -%}
  {%- set key_select, exact_parts, column_select, on = [], [], [], [] -%}
  {%- for k in key -%}
    {%- do key_select.append(quote_identifier(k) ~ ' as __k' ~ loop.index0) -%}
    {%- do on.append('a.__k' ~ loop.index0 ~ ' <=> b.__k' ~ loop.index0) -%}
  {%- endfor -%}
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
  {%- set row_hash = 'xxhash64(' ~ exact_parts | join(', ') ~ ')' if exact_parts else 'cast(0 as bigint)' -%}
  {%- set side -%}
        select
            {{ key_select | join(',\n            ') }},
            true as __present{% for s in column_select %},
            {{ s }}{% endfor %}
        from {relation}
  {%- endset -%}
  {%- set sql -%}
with
a_rows as (
{{ side | replace('{relation}', a | string) }}
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
        {%- endfor %}
        a.__hash <> b.__hash as __hash_differs
    from a
    full outer join b
        on {{ on | join('\n        and ') }}
),
classified as (
    select
        *,
        case
            when __in_b is null then 'only_in_a'
            when __in_a is null then 'only_in_b'
            when __hash_differs{% for t in tolerant_flags %} or {{ t }}{% endfor %} then 'changed'
            else 'unchanged'
        end as __kind
    from compared
)
{%- if samples is none %}
select
    count_if(__in_a) as rows_a,
    count_if(__in_b) as rows_b,
    count_if(__kind = 'only_in_a') as only_in_a,
    count_if(__kind = 'only_in_b') as only_in_b,
    count_if(__kind = 'changed') as changed,
    count_if(__kind = 'unchanged') as unchanged{% for c in columns %},
    count_if(__kind = 'changed' and __d{{ loop.index0 }}) as changed_{{ loop.index0 }}{% endfor %}
from classified
{%- else %},
ranked as (
    select
        __kind as kind,
        to_json(
            named_struct(
                'key', named_struct({% for k in key %}{{ delta_ops._diff_string(k) }}, __k{{ loop.index0 }}{{ ', ' if not loop.last }}{% endfor %}),
                'columns', case when __kind = 'changed' then filter(
                    array({% for c in columns %}case when __d{{ loop.index0 }} then {{ delta_ops._diff_string(c) }} end, {% endfor %}cast(null as string)),
                    x -> x is not null
                ) else cast(array() as array<string>) end
            ),
            map('ignoreNullFields', 'false')
        ) as sample,
        row_number() over (
            partition by __kind order by {% for k in key %}__k{{ loop.index0 }}{{ ', ' if not loop.last }}{% endfor %}
        ) as __n
    from classified
    where __kind <> 'unchanged'
)
select kind, sample from ranked where __n <= {{ samples | int }} order by kind, __n
{%- endif %}
  {%- endset -%}
  {{ return(sql) }}
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
