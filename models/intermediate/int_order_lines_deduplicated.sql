{#-
  The current state of every order line, merged batch by batch (see int_orders_deduplicated).
-#}
{{
    config(
        materialized='incremental',
        incremental_strategy='merge',
        unique_key='order_line_id',
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

line_changes as (
    select staged.* from {{ ref('stg_shop__order_lines') }} as staged
    {% if is_incremental() -%}
        {#- a literal: Delta skips the bronze files of the batches already merged -#}
        where staged.batch_id > {{ max_column_value(this, 'batch_id', -1) }}
    {%- endif %}
),

quarantined_lines as (
    select record_id as order_line_id from {{ ref('int_shop_rows_quarantined') }}
    where source_table = 'order_lines'
),

ranked as (
    select
        line_changes.*,
        row_number() over (
            partition by line_changes.order_line_id
            order by line_changes.batch_id desc, line_changes.updated_at desc
        ) as change_rank
    from line_changes
    left anti join quarantined_lines
        on line_changes.order_line_id = quarantined_lines.order_line_id
),

final as (
    select
        order_line_id,
        order_id,
        product_id,
        quantity,
        unit_price,
        quantity * unit_price as line_amount,
        updated_at,
        change_op = 'D' as is_deleted,
        batch_id
    from ranked
    -- the first load has nothing to delete: deleted keys are left out
    where change_rank = 1{% if not is_incremental() %} and change_op != 'D'{% endif %}
)

select * from final
