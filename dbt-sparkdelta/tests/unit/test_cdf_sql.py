"""The `cdf` strategy's SQL: the net change per key, and the MERGE that applies it."""

from __future__ import annotations

import pytest

KEYS = ["`order_id`", "`line_no`"]
COLUMNS = ["`order_id`", "`line_no`", "`amount`"]


def test_net_changes_keep_each_keys_last_change_and_drop_pre_images(macros, relation):
    sql = macros.sql("get_cdf_net_changes_sql", relation("bronze", "changes"), KEYS)
    assert "from `bronze`.`changes` where _change_type != 'update_preimage'" in sql
    assert (
        "row_number() over ( partition by `order_id`, `line_no` order by _commit_version desc, "
        "case when _change_type = 'delete' then 0 else 1 end desc ) as _cdf_rank"
    ) in sql
    assert sql.startswith("select * except (_cdf_rank) from (")
    assert sql.endswith("where _cdf_rank = 1")


@pytest.fixture
def cdf_merge(macros, relation):
    def render(is_snapshot: bool) -> str:
        return macros.sql(
            "get_cdf_merge_sql",
            relation("silver", "order_lines"),
            relation("silver", "order_lines__dbt_tmp"),
            KEYS,
            COLUMNS,
            is_snapshot,
        )

    return render


def test_merge_applies_the_net_changes_on_null_safe_keys(macros, relation, cdf_merge):
    sql = cdf_merge(is_snapshot=False)
    net = macros.sql("get_cdf_net_changes_sql", relation("silver", "order_lines__dbt_tmp"), KEYS)
    assert sql.startswith(f"merge into `silver`.`order_lines` as dest using ( {net} ) as src ")
    assert " on dest.`order_id` <=> src.`order_id` and dest.`line_no` <=> src.`line_no` " in sql
    deleted = sql.index("when matched and src._change_type = 'delete' then delete")
    updated = sql.index(
        "when matched then update set dest.`order_id` = src.`order_id`, "
        "dest.`line_no` = src.`line_no`, dest.`amount` = src.`amount`"
    )
    inserted = sql.index(
        "when not matched and src._change_type != 'delete' then insert "
        "( `order_id`, `line_no`, `amount` ) values ( src.`order_id`, src.`line_no`, src.`amount` )"
    )
    assert deleted < updated < inserted
    # change rows: a target row the changes do not mention stays
    assert "not matched by source" not in sql


def test_only_a_snapshot_deletes_the_rows_it_does_not_hold(cdf_merge):
    assert cdf_merge(is_snapshot=True).endswith("when not matched by source then delete")
    assert not cdf_merge(is_snapshot=False).endswith("then delete")


@pytest.fixture
def touched_rows(macros, relation):
    """cdf_touched_rows of `bronze`.`orders` under a read plan of the given kind."""

    def render(kind: str, keys=("order_id", "line_no")) -> str:
        plan = {"table": "bronze.orders", "kind": kind, "start": 6, "end": 9}
        macros.context["load_relation"] = lambda upstream: upstream
        macros.context["is_incremental"] = lambda: kind != "snapshot"
        macros.adapter.cdf_read_plan = lambda model, upstream, target, on_gap: plan
        return macros.sql("cdf_touched_rows", relation("bronze", "orders"), list(keys))

    return render


def test_touched_rows_add_the_current_rows_of_every_key_a_change_touched(touched_rows):
    sql = touched_rows("changes")
    changes = (
        "(select *, '{\"bronze.orders\": 9}' as _cdf_watermark "
        "from table_changes('bronze.orders', 6, 9))"
    )
    # every change row (updates' pre-images and deletes too), then the current rows
    assert sql.startswith(f"(select * from {changes} as changes union all select current_rows.*, ")
    assert (
        "'current' as _change_type, cast(9 as bigint) as _commit_version, "
        "cast(null as timestamp) as _commit_timestamp, '{\"bronze.orders\": 9}' as _cdf_watermark "
        "from `bronze`.`orders` version as of 9 as current_rows "
        f"left semi join {changes} as touched "
        "on current_rows.`order_id` <=> touched.`order_id` "
        "and current_rows.`line_no` <=> touched.`line_no`)"
    ) in sql


def test_touched_rows_without_a_watermark_are_the_snapshot(touched_rows):
    sql = touched_rows("snapshot")
    assert "'snapshot' as _change_type" in sql
    assert "from `bronze`.`orders` version as of 9" in sql
    assert "'current'" not in sql and "table_changes" not in sql


def test_touched_rows_need_the_upstream_key(touched_rows, macros):
    with pytest.raises(macros.error, match="cdf_touched_rows needs the upstream's key columns"):
        touched_rows("changes", keys=())
