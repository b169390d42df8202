"""What the pinned Spark and Delta releases bring beyond Delta 4.0, checked on the runtime
(docs/interop.md, "What the releases bring"): each test is one fact a dbt + Delta user relies
on, on a small table of its own."""

from __future__ import annotations

import pytest

from python_tests.conftest import unique_schema


@pytest.fixture(scope="module")
def schema(delta_spark):
    name = unique_schema("releases")
    delta_spark.sql(f"create schema `{name}`")
    yield name
    delta_spark.sql(f"drop schema `{name}` cascade")


def _properties(spark, table: str) -> dict[str, str]:
    return {row.key: row.value for row in spark.sql(f"show tblproperties {table}").collect()}


def test_merge_with_schema_evolution_evolves_without_the_automerge_setting(delta_spark, schema):
    table = f"`{schema}`.evolving"
    delta_spark.sql(f"create table {table} (id int, a string) using delta")
    delta_spark.sql(f"insert into {table} values (1, 'x')")
    assert delta_spark.conf.get("spark.databricks.delta.schema.autoMerge.enabled") == "false"
    delta_spark.sql(
        f"merge with schema evolution into {table} as t "
        "using (select 1 as id, 'y' as a, 'new' as b union all select 2, 'z', 'n2') as s "
        "on t.id = s.id when matched then update set * when not matched then insert *"
    )
    rows = delta_spark.sql(f"select id, a, b from {table} order by id").collect()
    assert [tuple(row) for row in rows] == [(1, "y", "new"), (2, "z", "n2")]


def test_identity_generated_and_default_columns_in_sql_ddl(delta_spark, schema):
    table = f"`{schema}`.computed"
    delta_spark.sql(
        f"create table {table} (id bigint generated always as identity (start with 10 "
        "increment by 5), at timestamp, day date generated always as (cast(at as date)), "
        "note string default 'none') using delta "
        "tblproperties ('delta.feature.allowColumnDefaults' = 'supported')"
    )
    delta_spark.sql(f"insert into {table} (at) values (timestamp'2026-03-01 23:30:00')")
    [row] = delta_spark.sql(f"select id, cast(day as string), note from {table}").collect()
    assert tuple(row) == (10, "2026-03-01", "none")
    features = _properties(delta_spark, table)
    assert {"identityColumns", "generatedColumns", "allowColumnDefaults"} <= {
        key.removeprefix("delta.feature.") for key in features
    }


def test_type_widening_takes_an_integer_to_a_wide_decimal(delta_spark, schema):
    table = f"`{schema}`.widening"
    delta_spark.sql(
        f"create table {table} (id int) using delta "
        "tblproperties ('delta.enableTypeWidening' = 'true')"
    )
    delta_spark.sql(f"insert into {table} values (2147483647)")
    delta_spark.sql(f"alter table {table} change column id type decimal(22, 0)")
    [row] = delta_spark.sql(f"select id from {table}").collect()
    assert str(row.id) == "2147483647"
    assert delta_spark.table(table).schema["id"].dataType.simpleString() == "decimal(22,0)"


def test_variant_shredding_is_a_preview_feature(delta_spark, schema):
    table = f"`{schema}`.shredded"
    delta_spark.sql(
        f"create table {table} (id int, payload variant) using delta "
        "tblproperties ('delta.enableVariantShredding' = 'true')"
    )
    delta_spark.sql(f"""insert into {table} select 1, parse_json('{{"a": 1}}')""")
    features = _properties(delta_spark, table)
    assert features["delta.feature.variantShredding-preview"] == "supported"
    query = f"select variant_get(payload, '$.a', 'int') as a from {table}"
    [row] = delta_spark.sql(query).collect()
    assert row.a == 1


def test_sql_scripting_runs_a_compound_statement(delta_spark):
    [row] = delta_spark.sql(
        "BEGIN DECLARE total INT DEFAULT 1; SET total = total + 41; SELECT total; END"
    ).collect()
    assert row.total == 42
