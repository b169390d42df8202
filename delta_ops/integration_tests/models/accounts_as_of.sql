{#-
  accounts as each of its last four commits left it, read with delta_ops.relation_as_of by
  version (counted back from delta_ops.table_version), and once by the timestamp of a commit
  (taken from delta_ops.history_query): the same rows as that version. Built right after
  accounts (it refs it), when its last four commits are those of the same build.
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

with by_version as (
    {% for versions_back in [3, 2, 1, 0] -%}
        select
            'version' as read_by,
            {{ versions_back }} as versions_back,
            account_id,
            owner,
            balance
        from {{ delta_ops.relation_as_of(ref('accounts'), version=current - versions_back) }}
        {% if not loop.last -%}
            union all
        {% endif -%}
    {%- endfor %}
),

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
    select * from by_version
    union all
    select * from by_timestamp
)

select * from final
