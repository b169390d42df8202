"""Query results show TIMESTAMPs as the session does (its time zone, UTC), whatever the dbt
process's local zone: on `session` and `connect` PySpark's collect() would give them in the
local zone, while Spark SQL, the Thrift server and a RESTORE's timestamp use the session's."""

SHOWN = "2026-07-01 12:00:00"


def test_a_timestamp_and_a_timestamp_ntz_come_back_as_spark_shows_them(
    project, local_zone_not_the_sessions
):
    [row] = project.run_sql(
        f"select timestamp'{SHOWN}' as t, timestamp_ntz'{SHOWN}' as n, "
        f"named_struct('at', timestamp'{SHOWN}') as s, cast(timestamp'{SHOWN}' as string) as text",
        fetch="all",
    )
    t, n, s, text = row
    assert text == SHOWN
    assert str(t)[:19] == SHOWN and str(n)[:19] == SHOWN
    inside = s.at if hasattr(s, "at") else s  # a Row, or JSON text over Thrift
    assert SHOWN in str(inside)


def test_describe_history_commit_times_match_the_change_feeds(project, local_zone_not_the_sessions):
    table = f"{project.test_schema}.timestamps_history"
    project.run_sql(
        f"create table {table} (id int) using delta "
        "tblproperties ('delta.enableChangeDataFeed' = 'true')"
    )
    project.run_sql(f"insert into {table} values (1)")
    history = project.run_sql(f"describe history {table}", fetch="all")
    [(committed,)] = project.run_sql(
        f"select distinct cast(_commit_timestamp as string) from table_changes('{table}', 1)",
        fetch="all",
    )
    [insert] = [row for row in history if int(row[0]) == 1]
    assert str(insert[1])[:19] == committed[:19]
