{#-
  The seed as a table whose history each build makes the same way: the table's own commit,
  then its three post-hooks (an insert, an update, a delete), so the time-travel models below
  read it by versions counted back from the latest however often it was built.
  Its config is what apply_property_policy restores in the operation tests.
-#}
{{
    config(
        materialized='table',
        tblproperties={'delta_ops_it.owner': 'finance'},
        post_hook=[
            "insert into {{ this }} values (4, 'dee', 400)",
            "update {{ this }} set balance = balance + 5 where account_id = 1",
            "delete from {{ this }} where account_id = 2",
        ],
    )
}}

select
    account_id,
    owner,
    balance
from {{ ref('raw_accounts') }}
