{{ config(materialized='table') }}

select
    id,
    name,
    note
from {{ ref('people') }}
