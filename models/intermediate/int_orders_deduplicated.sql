{#-
  The current state of every order, merged batch by batch: each run reads only the batches
  that arrived since the last run and merges the latest change per order into the table.
-#}
{{
    config(
        materialized='incremental',
        incremental_strategy='merge',
        unique_key='order_id',
        tblproperties={
            'delta.enableChangeDataFeed': 'true',
            'delta.enableRowTracking': 'true',
            'delta.enableDeletionVectors': 'true',
        },
    )
}}

with

order_changes as (
    select * from {{ ref('stg_shop__orders') }}
    {% if is_incremental() -%}
        where batch_id > (select coalesce(max(batch_id), -1) from {{ this }})
    {%- endif %}
),

ranked as (
    select
        *,
        row_number() over (
            partition by order_id
            order by batch_id desc, updated_at desc
        ) as change_rank
    from order_changes
),

final as (
    select
        order_id,
        customer_id,
        status,
        ordered_at,
        updated_at,
        change_op = 'D' as is_deleted,
        batch_id
    from ranked
    where change_rank = 1
)

select * from final
