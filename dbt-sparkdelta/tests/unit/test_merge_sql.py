"""get_delta_merge_sql: the MERGE of the `merge` strategy, clause by clause."""

from __future__ import annotations

import pytest

SRC, DEST = "`DBT_INTERNAL_SOURCE`", "`DBT_INTERNAL_DEST`"
COLUMNS = ["id", "name", "amount"]


@pytest.fixture
def merge(macros, relation):
    def render(options: dict, target_columns=COLUMNS, source_columns=COLUMNS, predicates=None):
        return macros.sql(
            "get_delta_merge_sql",
            relation("analytics", "orders"),
            relation("analytics", "orders__dbt_tmp"),
            {"model_id": "model.shop.orders", **options},
            target_columns,
            source_columns,
            predicates,
        )

    return render


def test_composite_key_matches_null_safely_and_unchanged_rows_are_not_updated(merge):
    sql = merge({"unique_key": ["id", "name"]})
    assert sql.startswith(f"merge into `analytics`.`orders` as {DEST} ")
    assert f"using `analytics`.`orders__dbt_tmp` as {SRC} " in sql
    on = sql[sql.index(" on ") + 4 : sql.index(" when ")]
    assert on == f"{SRC}.`id` <=> {DEST}.`id` and {SRC}.`name` <=> {DEST}.`name`"
    # the keys are equal on a match: only the other columns decide "unchanged"
    assert (
        f"when matched and not ({SRC}.`amount` <=> {DEST}.`amount`) then update set "
        f"{DEST}.`id` = {SRC}.`id`, {DEST}.`name` = {SRC}.`name`, "
        f"{DEST}.`amount` = {SRC}.`amount`"
    ) in sql
    assert sql.endswith("when not matched then insert *")
    assert "not matched by source" not in sql


def test_without_a_key_nothing_matches_and_every_row_is_inserted(merge):
    sql = merge({})
    assert f" on false when matched and not ({SRC}.`id` <=> {DEST}.`id` and " in sql
    assert sql.endswith("when not matched then insert *")


def test_skip_unchanged_off_updates_every_match(merge):
    sql = merge({"unique_key": "id", "merge_skip_unchanged": False})
    assert "when matched then update set" in sql
    assert "not (" not in sql


def test_clauses_in_order_with_their_conditions(merge):
    sql = merge(
        {
            "unique_key": "id",
            "matched_delete_condition": f"{SRC}.is_deleted",
            "matched_condition": f"{SRC}.amount >= {DEST}.amount",
            "not_matched_condition": f"{SRC}.amount > 0",
            "not_matched_by_source_action": "delete",
            "not_matched_by_source_condition": f"{DEST}.id > 5",
        }
    )
    delete = sql.index(f"when matched and ({SRC}.is_deleted) then delete")
    update = sql.index(f"when matched and ({SRC}.amount >= {DEST}.amount) and not (")
    insert = sql.index(f"when not matched and ({SRC}.amount > 0) then insert *")
    by_source = sql.index(f"when not matched by source and ({DEST}.id > 5) then delete")
    assert delete < update < insert < by_source


def test_not_matched_by_source_update_sets_the_given_expressions(merge):
    sql = merge(
        {
            "unique_key": "id",
            "not_matched_by_source_action": "update",
            "not_matched_by_source_set": {"amount": "0", "name": "'gone'"},
        }
    )
    assert sql.endswith(
        f"when not matched by source then update set {DEST}.`amount` = 0, {DEST}.`name` = 'gone'"
    )


def test_update_columns_and_exclude_columns_choose_what_a_match_updates(merge):
    only = merge({"unique_key": "id", "merge_update_columns": ["amount"]})
    assert f"then update set {DEST}.`amount` = {SRC}.`amount` when not matched" in only
    excluded = merge({"unique_key": "id", "merge_exclude_columns": ["name"]})
    assert f"{DEST}.`name` =" not in excluded
    assert f"{DEST}.`id` = {SRC}.`id`, {DEST}.`amount` = {SRC}.`amount`" in excluded


def test_a_new_source_column_takes_update_set_star_and_no_unchanged_check(merge):
    sql = merge({"unique_key": "id"}, source_columns=[*COLUMNS, "note"])
    assert "when matched then update set * when not matched then insert *" in sql


def test_a_target_column_the_source_lacks_is_left_out_of_the_insert(merge):
    sql = merge({"unique_key": "id"}, target_columns=[*COLUMNS, "legacy"])
    assert sql.endswith(
        f"when not matched then insert (`id`, `name`, `amount`) "
        f"values ({SRC}.`id`, {SRC}.`name`, {SRC}.`amount`)"
    )


def test_incremental_predicates_join_the_on_clause(merge):
    sql = merge({"unique_key": "id"}, predicates=[f"{DEST}.day >= '2024-01-01'"])
    assert f"on {SRC}.`id` <=> {DEST}.`id` and ({DEST}.day >= '2024-01-01') when" in sql


def test_aliases_are_validated_and_used(macros, merge):
    sql = merge({"unique_key": "id", "source_alias": "s", "target_alias": "t"})
    assert "merge into `analytics`.`orders` as `t` using" in sql
    assert "on `s`.`id` <=> `t`.`id`" in sql
    with pytest.raises(macros.error, match="Invalid source_alias of model.shop.orders"):
        merge({"unique_key": "id", "source_alias": "s; drop table x"})


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"skip_matched_step": True, "skip_not_matched_step": True}, "both true"),
        ({"not_matched_by_source_action": "truncate"}, "must be 'delete' or 'update'"),
        ({"not_matched_by_source_action": "update"}, "needs `not_matched_by_source_set`"),
        ({"merge_update_columns": ["a"], "merge_exclude_columns": ["b"]}, "not both"),
        ({"unique_key": "id) or (1=1"}, "Invalid unique_key of model.shop.orders"),
    ],
)
def test_contradictory_or_unsafe_options_are_refused_naming_the_model(
    macros, merge, options, message
):
    with pytest.raises(macros.error, match=message) as refused:
        merge(options)
    assert "model.shop.orders" in str(refused.value)


def test_skip_steps_leave_out_their_clause(merge):
    assert "when matched" not in merge({"unique_key": "id", "skip_matched_step": True})
    assert "when not matched" not in merge({"unique_key": "id", "skip_not_matched_step": True})


def test_merge_strategy_passes_the_models_config(macros, relation):
    macros.config.update(
        unique_key="id", merge_exclude_columns=["name"], incremental_predicates="amount > 0"
    )
    sql = macros.sql(
        "get_incremental_strategy_sql",
        "merge",
        relation("analytics", "orders__dbt_tmp"),
        relation("analytics", "orders"),
        COLUMNS,
        COLUMNS,
    )
    assert f"on {SRC}.`id` <=> {DEST}.`id` and (amount > 0) when matched" in sql
    assert f"{DEST}.`name` =" not in sql


@pytest.mark.parametrize("strategy", ["append", "delete+insert"])
def test_columns_delta_computes_are_left_out_of_an_insert(macros, relation, strategy):
    macros.config.update(identity_columns=["order_sk"], generated_columns={"day": "x"})
    target = [*COLUMNS, "order_sk", "day", "note"]
    sql = macros.sql(
        "get_incremental_strategy_sql",
        strategy,
        relation("analytics", "orders__dbt_tmp"),
        relation("analytics", "orders"),
        target,
        [*COLUMNS, "DAY"],
    )
    # Delta numbers order_sk; `day` comes from the SELECT (Delta checks it); a column the
    # SELECT lacks that Delta does not compute still fails loudly, as before
    inserted = ", ".join(f"`{c}`" for c in [*COLUMNS, "day", "note"])
    assert f"({inserted})" in sql and "order_sk" not in sql


def test_schema_evolution_is_the_merge_clause(merge):
    sql = merge({"unique_key": "id", "merge_with_schema_evolution": True})
    assert sql.startswith(f"merge with schema evolution into `analytics`.`orders` as {DEST} ")
    assert merge({"unique_key": "id"}).startswith("merge into ")
