{#-
  One row per live payment (a charge or a refund), with the fields of the provider's response
  that analysts ask for read from silver's VARIANT with variant_get: a path and a SQL type, no
  JSON parsing at query time, NULL where a payment's response has no such field (only cards
  have a brand and a 3-D Secure result).
-#}
with

payments as (
    select * from {{ ref('int_payments_deduplicated') }}
    where not is_deleted
),

final as (
    select
        -- ids
        payment_id,
        order_id,
        variant_get(provider_response, '$.psp_reference', 'string') as psp_reference,

        -- attributes
        variant_get(provider_response, '$.kind', 'string') as payment_kind,
        payment_method,
        variant_get(provider_response, '$.provider', 'string') as provider,
        variant_get(provider_response, '$.payment_method.card.brand', 'string') as card_brand,
        variant_get(provider_response, '$.three_d_secure.result', 'string') as three_ds_result,
        variant_get(provider_response, '$.risk.score', 'double') as risk_score,
        array_size(
            variant_get(provider_response, '$.events', 'array<variant>')
        ) as event_count,

        -- amounts
        amount,
        variant_get(provider_response, '$.fees.processing', 'decimal(10, 2)') as fee_amount,

        -- timestamps
        paid_at,
        updated_at
    from payments
)

select * from final
