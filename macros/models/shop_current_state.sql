{#-
  The current state of every key of a shop entity that `changes` touches, as the change rows of
  the `cdf` strategy: `changes` is a relation of staged rows (shop_staged_columns) from
  cdf_touched_rows, i.e. the bronze change rows since the version processed last and the
  current bronze rows of the keys they touch ('current'), or the whole of bronze ('snapshot').

  Per touched key, its newest good current row (shop_change_rejection, shop_change_order) is
  the key's state, exactly what a full refresh computes from bronze's rows of that key; a key
  with no good row left (deleted from bronze, or only bad changes) is a 'delete' (on a snapshot
  read, left out). A key whose newest good change is a delete (change_op 'D') keeps a
  tombstone row (is_deleted).
-#}
{% macro shop_current_state(source_table, changes) -%}
    {%- set entity = shop_entity(source_table) -%}
    {%- set key = entity.key -%}
    select
        touched.{{ key }},
        {%- for column in entity.columns if column != key %}
        newest.{{ column }},
        {%- endfor %}
        newest.change_op = 'D' as is_deleted,
        newest.change_op,
        newest.batch_id,
        case
            when newest.{{ key }} is null then 'delete'
            when newest._change_type = 'snapshot' then 'snapshot'
            else 'update_postimage'
        end as _change_type,
        touched._commit_version,
        touched._cdf_watermark
    from (
        select
            {{ key }},
            max(_commit_version) as _commit_version,
            max(_cdf_watermark) as _cdf_watermark,
            bool_or(_change_type = 'snapshot') as is_snapshot
        from {{ changes }}
        where {{ key }} is not null
        group by {{ key }}
    ) as touched
    left join (
        select * from (
            select
                *,
                row_number() over (
                    partition by {{ key }}
                    order by {{ shop_change_order(source_table) }} desc
                ) as change_rank
            from {{ changes }}
            where
                _change_type in ('current', 'snapshot')
                and {{ shop_change_rejection(source_table) }} is null
        ) as ranked
        where change_rank = 1
    ) as newest
        on touched.{{ key }} = newest.{{ key }}
    {#- a snapshot replaces the table: its keys without a good row need no delete #}
    where newest.{{ key }} is not null or not touched.is_snapshot
{%- endmacro %}
