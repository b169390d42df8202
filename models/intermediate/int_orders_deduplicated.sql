{#-
  The current state of every order: its newest good change (see the model's YAML for the
  rules). Each run reads only the batches that arrived since the last run and merges their
  newest change per order; a change older than the state already merged never overwrites it.
  A delete is kept as a tombstone (is_deleted), so a late, older change cannot bring the order
  back, and a full refresh gives the same table.
-#}
{{
    config(
        materialized='incremental',
        incremental_strategy='merge',
        unique_key='order_id',
        matched_condition=newer_change_condition(),
        liquid_clustered_by=['order_id'],
        optimize_after_build=var('optimize_silver_after_build', false),
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

good_changes as (
    select * from order_changes
    where {{ shop_change_rejection('orders') }} is null
),

ranked as (
    select
        *,
        row_number() over (
            partition by order_id
            order by
                updated_at desc,
                batch_id desc,
                case change_op when 'D' then 3 when 'U' then 2 else 1 end desc,
                customer_id desc,
                status desc,
                ordered_at desc
        ) as change_rank
    from good_changes
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
