"""The small text macros: identifiers and literals, table clauses, the incremental strategies'
writes, the delete step of delete+insert, and the config checks."""

from __future__ import annotations

import pytest

COLUMNS = ["id", "order date", "amount"]


def test_identifiers_from_configs_are_validated_and_data_columns_quoted(macros):
    assert macros.safe_identifier("order_id", "unique_key") == "`order_id`"
    for bad in ["order id", "1st", "a`b", "x; drop table t", 7, None]:
        with pytest.raises(macros.error, match="Invalid unique_key .*letters, digits"):
            macros.safe_identifier(bad, "unique_key")
    assert macros.quote_identifier("order date") == "`order date`"
    assert macros.quote_identifier("a`b") == "`a``b`"


def test_string_literals_escape_backslashes_and_quotes(macros):
    assert macros.sql_string("it's") == "'it\\'s'"
    assert macros.sql_string("C:\\dir") == "'C:\\\\dir'"
    assert macros.sql_string(42) == "'42'"


def test_column_list_options_accept_a_name_or_a_list(macros):
    macros.config.update(partition_by="day", zorder_by=["customer_id", "day"])
    assert macros.config_column_list("partition_by") == ["`day`"]
    assert macros.config_column_list("zorder_by") == ["`customer_id`", "`day`"]
    assert macros.config_column_list("liquid_clustered_by") == []
    macros.config.update(partition_by="day-1")
    with pytest.raises(macros.error, match="`partition_by` column of model.shop.orders"):
        macros.config_column_list("partition_by")


def test_tblproperties_are_sorted_and_escaped(macros):
    sql = macros.sql("get_tblproperties_sql", {"z.key": "it's", "a.key": "true"})
    assert sql == "tblproperties ( 'a.key' = 'true', 'z.key' = 'it\\'s' )"
    assert macros.sql("get_tblproperties_sql", {}) == ""


def test_layout_is_clustering_else_partitioning_else_nothing(macros):
    assert macros.sql("get_delta_layout_sql") == ""
    macros.config.update(partition_by=["day"])
    assert macros.sql("get_delta_layout_sql") == "partitioned by (`day`)"
    macros.config.update(liquid_clustered_by=["customer_id", "day"])
    assert macros.sql("get_delta_layout_sql") == "cluster by (`customer_id`, `day`)"


@pytest.fixture
def write(macros, relation):
    def render(strategy: str) -> str:
        return macros.sql(
            "get_incremental_strategy_sql",
            strategy,
            relation("analytics", "orders__dbt_tmp"),
            relation("analytics", "orders"),
            COLUMNS,
            COLUMNS,
        )

    return render


SELECT = "select `id`, `order date`, `amount` from `analytics`.`orders__dbt_tmp`"


def test_append_and_delete_insert_insert_the_targets_columns_by_name(write):
    expected = f"insert into `analytics`.`orders` (`id`, `order date`, `amount`) {SELECT}"
    assert write("append") == expected
    assert write("delete+insert") == expected


def test_insert_overwrite_replaces_the_table_or_its_partitions(write):
    assert write("insert_overwrite") == f"insert overwrite table `analytics`.`orders` {SELECT}"


def test_replace_where_replaces_the_predicates_rows_and_needs_some(macros, write):
    with pytest.raises(macros.error, match="'replace_where' needs `incremental_predicates`"):
        write("replace_where")
    macros.config.update(incremental_predicates=["day >= '2024-01-01'", "region = 'eu'"])
    assert write("replace_where") == (
        "insert into `analytics`.`orders` replace where "
        f"day >= '2024-01-01' and region = 'eu' {SELECT}"
    )


def test_microbatch_replaces_its_batchs_event_time_window(macros, write):
    macros.config.update(event_time="ordered_at")
    macros.model["batch"] = {
        "event_time_start": "2024-01-01 00:00:00",
        "event_time_end": "2024-01-02 00:00:00",
    }
    assert write("microbatch") == (
        "insert into `analytics`.`orders` replace where "
        "`ordered_at` >= timestamp '2024-01-01 00:00:00' "
        f"and `ordered_at` < timestamp '2024-01-02 00:00:00' {SELECT}"
    )


def test_delete_step_of_delete_insert_deletes_matching_keys_null_safely(macros, relation):
    sql = macros.sql(
        "get_delete_matching_keys_sql",
        relation("analytics", "orders__dbt_tmp"),
        relation("analytics", "orders"),
        ["id", "line_no"],
        "day >= '2024-01-01'",
    )
    assert sql == (
        "merge into `analytics`.`orders` as DBT_INTERNAL_DEST using ( select distinct "
        "`id` as `__dbt_key_1`, `line_no` as `__dbt_key_2` "
        "from `analytics`.`orders__dbt_tmp` ) as DBT_INTERNAL_SOURCE "
        "on DBT_INTERNAL_SOURCE.`__dbt_key_1` <=> DBT_INTERNAL_DEST.`id` "
        "and DBT_INTERNAL_SOURCE.`__dbt_key_2` <=> DBT_INTERNAL_DEST.`line_no` "
        "when matched and (day >= '2024-01-01') then delete"
    )
    with pytest.raises(macros.error, match="'delete\\+insert' needs a `unique_key`"):
        macros.get_delete_matching_keys_sql("s", "t", None)


@pytest.mark.parametrize(
    ("config", "message"),
    [
        ({"liquid_clustered_by": ["a"], "partition_by": ["b"]}, "cannot be combined"),
        ({"clustered_by": ["a"], "buckets": 4}, "do not support bucketing"),
        ({"optimize_after_build": "yes"}, "optimize_after_build must be true or false"),
        ({"zorder_by": ["a"], "liquid_clustered_by": ["a"]}, "zorder_by cannot be combined"),
        ({"identity_columns": ["id"], "materialized": "seed"}, "SQL table and incremental models"),
        (
            {"tblproperties": {"delta.enableIcebergCompatV2": True}},
            "needs 'delta.columnMapping.mode'",
        ),
        (
            {
                "tblproperties": {
                    "delta.enableIcebergCompatV2": "true",
                    "delta.columnMapping.mode": "name",
                    "delta.enableDeletionVectors": "true",
                }
            },
            "no deletion vectors",
        ),
        (
            {"identity_columns": ["id"], "materialized": "table", "language": "python"},
            "SQL table and incremental models",
        ),
        (
            {
                "identity_columns": ["id"],
                "materialized": "incremental",
                "incremental_strategy": "insert_overwrite",
            },
            "merge, append and delete\\+insert, not `insert_overwrite`",
        ),
        (
            {"identity_columns": ["id"], "materialized": "incremental", "on_schema_change": "fail"},
            "on_schema_change `fail`",
        ),
    ],
)
def test_config_delta_cannot_honour_is_refused_naming_the_model(macros, config, message):
    macros.validate_delta_model_config()  # nothing set: nothing to refuse
    macros.adapter.method = config.pop("method", "session")
    macros.model["language"] = config.pop("language", "sql")
    macros.config.update(**config)
    with pytest.raises(macros.error, match=f"Model model.shop.orders: .*{message}"):
        macros.validate_delta_model_config()
