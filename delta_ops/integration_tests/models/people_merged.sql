{{ config(materialized='incremental', incremental_strategy='merge', unique_key='id') }}

select
    id,
    coalesce(name, 'unknown') as name
from {{ ref('people') }}
