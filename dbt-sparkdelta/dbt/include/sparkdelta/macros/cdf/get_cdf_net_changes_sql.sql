{#-
  The net effect per key of the change rows in `source`: its last change (latest
  _commit_version; within one commit an existing row wins over a delete), pre-images dropped.
  change_feed.net_changes is the same rule for DataFrames.
-#}
{% macro get_cdf_net_changes_sql(source, keys) -%}
select * except (_cdf_rank)
from (
    select
        *,
        row_number() over (
            partition by {{ keys | join(', ') }}
            order by
                _commit_version desc,
                case when _change_type = 'delete' then 0 else 1 end desc
        ) as _cdf_rank
    from {{ source }}
    where _change_type != 'update_preimage'
) as ranked_changes
where _cdf_rank = 1
{%- endmacro %}
