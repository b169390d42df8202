{#-
  The current state of every order line: its newest good change, read from the bronze commits
  made since the version processed last and merged where it beats the merged state, deletes
  kept as tombstones (see int_orders_deduplicated and the model's YAML).
-#}
{{
    config(
        materialized='incremental',
        incremental_strategy='cdf',
        unique_key='order_line_id',
        liquid_clustered_by=['order_line_id'],
        optimize_after_build=var('optimize_silver_after_build', false),
        tblproperties={
            'delta.enableChangeDataFeed': 'true',
            'delta.enableRowTracking': 'true',
            'delta.enableDeletionVectors': 'true',
        },
    )
}}

with

line_changes as (
    select
        {{ shop_staged_columns('order_lines') }},
        _change_type,
        _commit_version,
        _cdf_watermark
    from {{ cdf_changes(source('shop', 'order_lines')) }}
    {#- bronze is append-only: a row a later commit rewrote counts in its new form -#}
    where _change_type in ('insert', 'update_postimage', 'snapshot')
),

good_changes as (
    select * from line_changes
    where {{ shop_change_rejection('order_lines') }} is null
),

ranked as (
    select
        *,
        row_number() over (
            partition by order_line_id
            order by {{ shop_change_order('order_lines') }} desc
        ) as change_rank
    from good_changes
),

newest as (
    select * from ranked
    where change_rank = 1
),

winning as (
    select newest.* from newest
    {% if is_incremental() -%}
        {#- a snapshot (no bronze version processed yet) replaces the table: all keys stay -#}
        left join {{ this }} as merged on newest.order_line_id = merged.order_line_id
        where
            newest._change_type = 'snapshot'
            or merged.order_line_id is null
            or {{ shop_change_order('order_lines', 'newest') }}
            > {{ shop_change_order('order_lines', 'merged') }}
    {%- endif %}
),

final as (
    select
        -- ids
        order_line_id,
        order_id,
        product_id,

        -- amounts
        quantity,
        unit_price,
        quantity * unit_price as line_amount,

        -- timestamps
        updated_at,

        -- change log
        change_op = 'D' as is_deleted,
        change_op,
        batch_id,

        -- change feed
        case _change_type when 'snapshot' then 'snapshot' else 'update_postimage' end
            as _change_type,
        _commit_version,
        _cdf_watermark
    from winning
)

select * from final
