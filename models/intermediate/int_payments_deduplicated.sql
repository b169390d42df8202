{#-
  The current state of every payment (charges and refunds): its newest good change in bronze,
  every payment a bronze commit since the version processed last touches recomputed from its
  current bronze rows, by the rules of int_orders_deduplicated (`cdf` strategy). The provider's
  response is stored as a VARIANT, parsed once here: gold reads its fields with variant_get
  without re-parsing text, and a response that is not JSON never gets this far (quarantined).
  Appends are not folded in (fold_appends): the stored VARIANT is not the bronze text that the
  rule's last tie-break compares.
-#}
{{
    config(
        materialized='incremental',
        incremental_strategy='cdf',
        unique_key='payment_id',
        liquid_clustered_by=['payment_id'],
        tblproperties={
            'delta.enableChangeDataFeed': 'true',
            'delta.enableRowTracking': 'true',
            'delta.enableDeletionVectors': 'true',
        },
    )
}}

with

bronze_rows as (
    select
        {{ shop_staged_columns('payments') }},
        _change_type,
        _commit_version,
        _cdf_watermark
    from {{ cdf_touched_rows(source('shop', 'payments'), 'payment_id') }}
),

current_payments as (
    {{ shop_current_state('payments', 'bronze_rows') }}
),

final as (
    select
        * except (provider_response),
        -- a live payment's text passed shop_change_rejection's try_parse_json, so it parses;
        -- only a tombstone (a delete carries whatever it carries) can hold one that does not
        try_parse_json(provider_response) as provider_response
    from current_payments
)

select * from final
