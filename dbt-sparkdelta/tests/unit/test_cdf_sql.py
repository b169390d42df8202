"""The `cdf` strategy's SQL: the net change per key, and the MERGE that applies it."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

KEYS = ["`order_id`", "`line_no`"]
COLUMNS = ["`order_id`", "`line_no`", "`amount`"]
SOURCE, DEST = "DBT_INTERNAL_SOURCE", "DBT_INTERNAL_DEST"


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
    def render(is_snapshot: bool, matched_condition: str | None = None) -> str:
        return macros.sql(
            "get_cdf_merge_sql",
            relation("silver", "order_lines"),
            relation("silver", "order_lines__dbt_tmp"),
            KEYS,
            COLUMNS,
            is_snapshot,
            matched_condition,
        )

    return render


def test_merge_applies_the_net_changes_on_null_safe_keys(macros, relation, cdf_merge):
    sql = cdf_merge(is_snapshot=False)
    net = macros.sql("get_cdf_net_changes_sql", relation("silver", "order_lines__dbt_tmp"), KEYS)
    assert sql.startswith(
        f"merge into `silver`.`order_lines` as {DEST} using ( {net} ) as {SOURCE} "
    )
    assert (
        f" on {DEST}.`order_id` <=> {SOURCE}.`order_id` "
        f"and {DEST}.`line_no` <=> {SOURCE}.`line_no` "
    ) in sql
    deleted = sql.index(f"when matched and {SOURCE}._change_type = 'delete' then delete")
    updated = sql.index(
        f"when matched then update set {DEST}.`order_id` = {SOURCE}.`order_id`, "
        f"{DEST}.`line_no` = {SOURCE}.`line_no`, {DEST}.`amount` = {SOURCE}.`amount`"
    )
    inserted = sql.index(
        f"when not matched and {SOURCE}._change_type != 'delete' then insert "
        f"( `order_id`, `line_no`, `amount` ) values ( {SOURCE}.`order_id`, "
        f"{SOURCE}.`line_no`, {SOURCE}.`amount` )"
    )
    assert deleted < updated < inserted
    # change rows: a target row the changes do not mention stays
    assert "not matched by source" not in sql


def test_the_models_matched_condition_guards_the_update(cdf_merge):
    condition = f"{SOURCE}.amount > {DEST}.amount"
    sql = cdf_merge(is_snapshot=False, matched_condition=condition)
    assert f"when matched and ({condition}) then update set " in sql


def test_only_a_snapshot_deletes_the_rows_it_does_not_hold(cdf_merge):
    assert cdf_merge(is_snapshot=True).endswith("when not matched by source then delete")
    assert not cdf_merge(is_snapshot=False).endswith("then delete")


LOCATION = "file:/warehouse/bronze.db/orders"  # the upstream's, from DESCRIBE DETAIL


@pytest.fixture
def touched_rows(macros, relation):
    """cdf_touched_rows of `bronze`.`orders` under a read plan of the given kind."""

    def render(kind: str, keys=("order_id", "line_no"), appends_only=False, **options) -> str:
        plan = {"table": "bronze.orders", "kind": kind, "start": 6, "end": 9, "location": LOCATION}
        plan["appends_only"] = appends_only
        macros.context["load_relation"] = lambda upstream: upstream
        macros.context["is_incremental"] = lambda: kind != "snapshot"
        macros.adapter.cdf_read_plan = lambda model, upstream, target, on_gap: plan
        return macros.sql("cdf_touched_rows", relation("bronze", "orders"), list(keys), **options)

    return render


def test_touched_rows_add_the_current_rows_of_every_key_a_change_touched(touched_rows):
    sql = touched_rows("changes")
    changes = (
        "(select *, '{\"bronze.orders\": 9}' as _cdf_watermark "
        f"from table_changes_by_path('{LOCATION}', 6, 9))"
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


@pytest.fixture
def folding(macros, touched_rows):
    """cdf_touched_rows(..., fold_appends=true) of a model with a matched_condition, whose
    check for rewriting change rows finds `rewrites` (the queries it ran are kept)."""

    def render(rewrites: bool, **plan) -> tuple[str, list[str]]:
        asked: list[str] = []

        def run_query(sql):
            asked.append(" ".join(sql.split()))
            return SimpleNamespace(rows=[{"found": rewrites}])

        macros.context["run_query"] = run_query
        macros.config.update(matched_condition="DBT_INTERNAL_SOURCE.v > DBT_INTERNAL_DEST.v")
        return touched_rows("changes", fold_appends=True, **plan), asked

    return render


CHANGES = (
    "(select *, '{\"bronze.orders\": 9}' as _cdf_watermark "
    f"from table_changes_by_path('{LOCATION}', 6, 9))"
)
REWRITES = (
    f"(select * from {CHANGES} as changes where _change_type in ('update_preimage', 'delete'))"
)


def test_folded_appends_read_no_current_rows_when_no_change_rewrites_one(folding):
    sql, asked = folding(rewrites=False)
    assert asked == [f"select exists (select 1 from {REWRITES} as rewrites) as found"]
    assert sql == CHANGES  # the change rows alone: bronze itself is not read


def test_folded_appends_known_from_the_history_send_no_query(folding):
    sql, asked = folding(rewrites=True, appends_only=True)
    assert (sql, asked) == (CHANGES, [])


def test_folded_appends_read_the_current_rows_of_rewritten_keys_only(folding):
    sql, _ = folding(rewrites=True)
    assert sql.startswith(f"(select * from {CHANGES} as changes union all select current_rows.*, ")
    assert (
        "from `bronze`.`orders` version as of 9 as current_rows "
        f"left semi join {REWRITES} as touched on current_rows.`order_id` <=> touched.`order_id`"
    ) in sql


def test_folded_appends_need_the_models_matched_condition(touched_rows, macros):
    with pytest.raises(macros.error, match="fold_appends=true.* set matched_condition"):
        touched_rows("changes", fold_appends=True)


def test_a_unit_test_of_a_folding_model_renders_without_the_models_config(touched_rows, macros):
    # dbt renders a unit test's model under the unit test's own config
    macros.model["resource_type"] = "unit_test"
    assert "'snapshot' as _change_type" in touched_rows("snapshot", fold_appends=True)


def test_touched_rows_without_a_watermark_are_the_snapshot(touched_rows):
    sql = touched_rows("snapshot")
    assert "'snapshot' as _change_type" in sql
    assert "from `bronze`.`orders` version as of 9" in sql
    assert "'current'" not in sql and "table_changes" not in sql


def test_touched_rows_need_the_upstream_key(touched_rows, macros):
    with pytest.raises(macros.error, match="cdf_touched_rows needs the upstream's key columns"):
        touched_rows("changes", keys=())
