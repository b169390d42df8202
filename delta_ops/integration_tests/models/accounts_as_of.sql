{#-
  accounts as each of its last four commits left it, read with delta_ops.relation_as_of by
  version (counted back from delta_ops.table_version), and once by the timestamp of a commit
  (taken from delta_ops.history_query): the same rows as that version.
-#}
{{ config(materialized='table') }}

{%- set current = delta_ops.table_version(ref('accounts')) -%}
{#- none while dbt parses: any version and timestamp will do there -#}
{%- set current = current if current is not none else 3 -%}
{%- set inserted_at = '2000-01-01' -%}
{%- if execute -%}
    {%- set inserted_at = run_query(
        'select cast(committed_at as string) as committed_at from ('
        ~ delta_ops.history_query(ref('accounts')) ~ ') as commits where version = '
        ~ (current - 2)).columns[0].values()[0] -%}
{%- endif -%}

with

{% for versions_back in [3, 2, 1, 0] -%}
by_version_{{ versions_back }} as (
    select
        'version' as read_by,
        {{ versions_back }} as versions_back,
        account_id,
        owner,
        balance
    from {{ delta_ops.relation_as_of(ref('accounts'), version=current - versions_back) }}
),

{% endfor -%}

by_timestamp as (
    select
        'timestamp' as read_by,
        2 as versions_back,
        account_id,
        owner,
        balance
    from {{ delta_ops.relation_as_of(ref('accounts'), timestamp=inserted_at) }}
),

final as (
    select * from by_version_3
    union all
    select * from by_version_2
    union all
    select * from by_version_1
    union all
    select * from by_version_0
    union all
    select * from by_timestamp
)

select * from final
