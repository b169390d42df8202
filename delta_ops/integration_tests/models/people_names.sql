{#- A view: clone_schema clones tables only, and skips it. -#}
{{ config(materialized='view') }}

select
    id,
    name
from {{ ref('people') }}
