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

  A key with inserts only (cdf_touched_rows with fold_appends=true gives it no current rows)
  kept every bronze row it had, so its state is the newer of the table's row and its newest
  good insert: that insert is returned as an 'insert', which the MERGE applies where it wins
  (shop_change_wins, the model's matched_condition); with no good insert, nothing.
-#}
{% macro shop_current_state(source_table, changes) -%}
    {%- set entity = shop_entity(source_table) -%}
    {%- set key = entity.key -%}
    {#- One pass over the rows, partitioned by key (they are read once: `changes` holds a join
        with bronze): a key's good candidate rows rank first, the newest on top. -#}
    select
        {{ key }},
        {%- for column in entity.columns if column != key %}
        case when is_good then {{ column }} end as {{ column }},
        {%- endfor %}
        case when is_good then change_op = 'D' end as is_deleted,
        case when is_good then change_op end as change_op,
        case when is_good then batch_id end as batch_id,
        case
            when not is_good then 'delete'
            when is_folded then 'insert'
            when _change_type = 'snapshot' then 'snapshot'
            else 'update_postimage'
        end as _change_type,
        touched_version as _commit_version,
        touched_watermark as _cdf_watermark
    from (
        select
            *,
            row_number() over by_key_good_first as change_rank,
            max(_commit_version) over by_key as touched_version,
            max(_cdf_watermark) over by_key as touched_watermark
        from (
            select
                *,
                coalesce(
                    case
                        when is_folded then _change_type = 'insert'
                        else _change_type in ('current', 'snapshot')
                    end
                    and {{ shop_change_rejection(source_table) }} is null,
                    false
                ) as is_good
            from (
                select
                    *,
                    bool_and(_change_type = 'insert') over by_key as is_folded,
                    bool_or(_change_type = 'snapshot') over by_key as is_snapshot
                from {{ changes }}
                where {{ key }} is not null
                window by_key as (partition by {{ key }})
            ) as rows_of_touched_keys
        ) as judged
        window
            by_key as (partition by {{ key }}),
            by_key_good_first as (
                partition by {{ key }}
                order by is_good desc, {{ shop_change_order(source_table) }} desc
            )
    ) as ranked
    {#- a snapshot replaces the table, and a folded key keeps its row: neither needs a delete #}
    where change_rank = 1 and (is_good or not (is_snapshot or is_folded))
{%- endmacro %}
