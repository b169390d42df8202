{#- The live data files of a Delta table, counted from its JSON commits (see table_health). -#}
{% macro get_table_files_sql(location, small_bytes) %}
  {#- The live files: the latest add/remove action per path across the JSON commits. -#}
  {{ return("
    with log as (
        select _metadata.file_name as commit_file, value from text.`" ~ location ~ "/_delta_log/*.json`
    ),
    actions as (
        select
            commit_file,
            coalesce(get_json_object(value, '$.add.path'), get_json_object(value, '$.remove.path')) as path,
            get_json_object(value, '$.add.path') is not null as is_add,
            cast(get_json_object(value, '$.add.size') as bigint) as size,
            get_json_object(value, '$.add.deletionVector') is not null as has_dv
        from log
        where get_json_object(value, '$.add') is not null or get_json_object(value, '$.remove') is not null
    ),
    latest as (
        select *, row_number() over (partition by path order by commit_file desc) as action_rank
        from actions
    )
    select
        count(*) as files,
        coalesce(sum(size), 0) as bytes,
        coalesce(sum(case when size < " ~ small_bytes ~ " then 1 else 0 end), 0) as small_files,
        coalesce(sum(case when has_dv then 1 else 0 end), 0) as dv_files
    from latest
    where action_rank = 1 and is_add
  ") }}
{% endmacro %}
