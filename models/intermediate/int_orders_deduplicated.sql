{#-
  The current state of every order: its newest good change (see the model's YAML for the
  rules). Each run reads only the bronze commits made since the version it processed last (the
  change data feed of the source, up to a version pinned when the run starts) and merges, per
  order, the newest of their changes where it beats the merged state; the bronze version
  processed is committed with the MERGE (`cdf` strategy). A delete is kept as a tombstone
  (is_deleted), so a late, older change cannot bring the order back, and a full refresh gives
  the same table.
-#}
{{
    config(
        materialized='incremental',
        incremental_strategy='cdf',
        unique_key='order_id',
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
    select
        {{ shop_staged_columns('orders') }},
        _change_type,
        _commit_version,
        _cdf_watermark
    from {{ cdf_changes(source('shop', 'orders')) }}
    {#- bronze is append-only: a row a later commit rewrote counts in its new form -#}
    where _change_type in ('insert', 'update_postimage', 'snapshot')
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
            order by {{ shop_change_order('orders') }} desc
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
        left join {{ this }} as merged on newest.order_id = merged.order_id
        where
            newest._change_type = 'snapshot'
            or merged.order_id is null
            or {{ shop_change_order('orders', 'newest') }}
            > {{ shop_change_order('orders', 'merged') }}
    {%- endif %}
),

final as (
    select
        -- ids
        order_id,
        customer_id,

        -- attributes
        status,

        -- timestamps
        ordered_at,
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
