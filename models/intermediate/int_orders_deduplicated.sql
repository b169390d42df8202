{#-
  The current state of every order, merged batch by batch: each run reads only the batches
  that arrived since the last run, keeps the latest change per order, and merges it (a delete
  at the source deletes the row). Rows in quarantine are left out.
-#}
{{
    config(
        materialized='incremental',
        incremental_strategy='merge',
        unique_key='order_id',
        matched_delete_condition='DBT_INTERNAL_SOURCE.is_deleted',
        not_matched_condition='not DBT_INTERNAL_SOURCE.is_deleted',
        tblproperties={
            'delta.enableChangeDataFeed': 'true',
            'delta.enableRowTracking': 'true',
            'delta.enableDeletionVectors': 'true',
        },
    )
}}

with

order_changes as (
    select staged.* from {{ ref('stg_shop__orders') }} as staged
    {% if is_incremental() -%}
        {#- a literal: Delta skips the bronze files of the batches already merged -#}
        where staged.batch_id > {{ max_column_value(this, 'batch_id', -1) }}
    {%- endif %}
),

quarantined_orders as (
    select record_id as order_id from {{ ref('int_shop_rows_quarantined') }}
    where source_table = 'orders'
),

ranked as (
    select
        order_changes.*,
        row_number() over (
            partition by order_changes.order_id
            order by order_changes.batch_id desc, order_changes.updated_at desc
        ) as change_rank
    from order_changes
    left anti join quarantined_orders
        on order_changes.order_id = quarantined_orders.order_id
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
    -- the first load has nothing to delete: deleted keys are left out
    where change_rank = 1{% if not is_incremental() %} and change_op != 'D'{% endif %}
)

select * from final
