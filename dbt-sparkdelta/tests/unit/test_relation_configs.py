"""What reconciling an existing Delta table with its config changes (relation_configs), rule by
rule, without Jinja: the SQL rendered from it is checked in test_properties_sql.py."""

from __future__ import annotations

import dataclasses

import pytest

from dbt.adapters.sparkdelta import relation_configs
from dbt.adapters.sparkdelta.impl import SparkDeltaAdapter
from dbt.adapters.sparkdelta.relation_configs import (
    CheckConstraints,
    LiquidClustering,
    TableProperties,
    delta_table_changes,
)

NO_CHANGE = {
    "set_properties": {},
    "unset_properties": [],
    "drop_constraints": [],
    "add_constraints": {},
    "cluster_by": None,
}


def changes(desired, current, desired_clustering=(), current_clustering=()):
    return delta_table_changes(desired, current, list(desired_clustering), current_clustering)


def managed(*keys: str) -> dict[str, str]:
    return {"sparkdelta.managed_properties": ",".join(keys)}


def checks(**constraints: str) -> dict[str, str]:
    """Managed constraints as get_delta_table_properties writes them."""
    properties = {f"delta.constraints.{name}": sql for name, sql in constraints.items()}
    return properties | {"sparkdelta.managed_constraints": ",".join(sorted(constraints))}


# --- properties ------------------------------------------------------------------------------


def test_a_changed_property_is_set_and_an_unchanged_one_is_not():
    desired = {"delta.appendOnly": "true", "delta.logRetentionDuration": "30 days"}
    current = {"delta.appendOnly": "false", "delta.logRetentionDuration": "30 days"}
    assert changes(desired, current)["set_properties"] == {"delta.appendOnly": "true"}


def test_a_new_property_and_the_bookkeeping_keys_are_set_when_they_differ():
    desired = {"delta.appendOnly": "true"} | managed("delta.appendOnly")
    assert changes(desired, managed())["set_properties"] == desired
    assert changes(desired, desired) == NO_CHANGE


def test_values_compare_as_strings_exactly():
    assert changes({"delta.appendOnly": "true"}, {"delta.appendOnly": "TRUE"})["set_properties"]


def test_a_previously_managed_property_removed_from_the_config_is_unset():
    current = {"delta.appendOnly": "true", "delta.x": "1"} | managed("delta.appendOnly", "delta.x")
    desired = {"delta.x": "1"} | managed("delta.x")
    plan = changes(desired, current)
    assert plan["unset_properties"] == ["delta.appendOnly"]
    assert plan["set_properties"] == managed("delta.x")


def test_properties_the_project_never_set_are_left_alone():
    current = {"delta.minReaderVersion": "3", "owner": "someone"} | managed()
    assert changes(managed(), current) == NO_CHANGE


def test_a_managed_key_already_gone_from_the_table_is_not_unset():
    current = managed("delta.appendOnly")
    plan = changes(managed(), current)
    assert plan["unset_properties"] == []
    assert plan["set_properties"] == managed()


def test_unset_keys_keep_the_order_the_table_recorded():
    current = {"b": "1", "a": "1"} | managed("b", "a")
    assert changes(managed(), current)["unset_properties"] == ["b", "a"]


def test_constraint_keys_are_never_set_as_properties():
    plan = changes(checks(positive="x > 0"), {})
    assert "delta.constraints.positive" not in plan["set_properties"]
    assert plan["add_constraints"] == {"positive": "x > 0"}


# --- check constraints -----------------------------------------------------------------------


def test_a_changed_constraint_is_dropped_then_added():
    plan = changes(checks(positive="x > 0"), checks(positive="x >= 0"))
    assert plan["drop_constraints"] == ["positive"]
    assert plan["add_constraints"] == {"positive": "x > 0"}


def test_a_constraint_removed_from_the_config_is_dropped():
    plan = changes(checks(), checks(positive="x > 0"))
    assert plan["drop_constraints"] == ["positive"]
    assert plan["add_constraints"] == {}


def test_a_new_constraint_is_added_and_an_unchanged_one_kept():
    plan = changes(checks(kept="a > 0", new="b > 0"), checks(kept="a > 0"))
    assert plan["drop_constraints"] == []
    assert plan["add_constraints"] == {"new": "b > 0"}


def test_a_constraint_the_project_never_added_is_left_alone():
    current = {"delta.constraints.by_hand": "y is not null"} | checks()
    assert changes(checks(), current)["drop_constraints"] == []


def test_a_managed_constraint_already_gone_from_the_table_is_added_not_dropped():
    current = {"sparkdelta.managed_constraints": "positive"}
    plan = changes(checks(positive="x > 0"), current)
    assert plan["drop_constraints"] == []
    assert plan["add_constraints"] == {"positive": "x > 0"}


def test_constraints_are_read_from_their_property_keys():
    found = CheckConstraints.from_properties(checks(a="x > 0") | {"delta.appendOnly": "true"})
    assert found == CheckConstraints({"a": "x > 0"}, ("a",))


# --- liquid clustering -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("desired", "current", "cluster_by"),
    [
        (["day"], [], ["day"]),  # clustered from now on
        (["day", "id"], ["day"], ["day", "id"]),  # changed
        (["id", "day"], ["day", "id"], ["id", "day"]),  # the order matters
        ([], ["day"], []),  # CLUSTER BY NONE
        (["day"], ["day"], None),  # unchanged
        ([], [], None),
    ],
)
def test_clustering_is_changed_to_the_configured_columns_or_none(desired, current, cluster_by):
    assert changes({}, {}, desired, current)["cluster_by"] == cluster_by


# --- the whole plan --------------------------------------------------------------------------


def test_an_empty_config_on_a_table_with_nothing_managed_changes_nothing():
    assert changes({}, {}) == NO_CHANGE
    assert changes({}, {"delta.minReaderVersion": "1", "delta.constraints.c": "x > 0"}) == NO_CHANGE


def test_the_plan_is_plain_data():
    desired = {"delta.x": "1"} | managed("delta.x") | checks(new="b > 0")
    current = {"delta.y": "1"} | managed("delta.y") | checks(old="a > 0")
    assert changes(desired, current, ["day"], []) == {
        "set_properties": {"delta.x": "1"}
        | managed("delta.x")
        | {"sparkdelta.managed_constraints": "new"},
        "unset_properties": ["delta.y"],
        "drop_constraints": ["old"],
        "add_constraints": {"new": "b > 0"},
        "cluster_by": ["day"],
    }


def test_the_configs_are_immutable():
    with pytest.raises(dataclasses.FrozenInstanceError):
        LiquidClustering(("day",)).columns = ()  # type: ignore[misc]
    assert TableProperties(managed("a")).managed == ("a",)


def test_macros_reach_the_plan_through_an_available_adapter_method():
    assert "delta_table_changes" in SparkDeltaAdapter._available_


class TestColumnTypes:
    """Which type change Delta applies in place (its TypeWidening rules for schema evolution)."""

    @pytest.mark.parametrize(
        ("from_type", "to_type"),
        [
            ("tinyint", "smallint"),
            ("smallint", "int"),
            ("int", "bigint"),
            ("tinyint", "bigint"),
            ("float", "double"),
            ("date", "timestamp_ntz"),
            ("decimal(10,2)", "decimal(12,2)"),
            ("decimal(10,2)", "decimal(12,4)"),
            ("decimal(10,2)", "decimal(38, 2)"),
        ],
    )
    def test_widenings(self, from_type, to_type):
        assert relation_configs.is_delta_widening(from_type, to_type)

    @pytest.mark.parametrize(
        ("from_type", "to_type"),
        [
            ("bigint", "int"),  # narrower
            ("double", "float"),
            ("decimal(12,2)", "decimal(10,2)"),
            ("decimal(10,2)", "decimal(10,4)"),  # more scale, fewer integer digits
            ("decimal(10,4)", "decimal(12,2)"),  # less scale
            ("int", "double"),  # Delta widens it by ALTER only, not in schema evolution
            ("int", "decimal(12,0)"),
            ("int", "string"),
            ("date", "timestamp"),
            ("string", "int"),
        ],
    )
    def test_not_widenings(self, from_type, to_type):
        assert not relation_configs.is_delta_widening(from_type, to_type)

    def test_the_problem_names_the_types_and_what_to_do(self):
        on = {relation_configs.TYPE_WIDENING: "true"}
        assert relation_configs.column_type_problem("int", "bigint", on) == ""
        off = relation_configs.column_type_problem("int", "bigint", {})
        assert "int -> bigint" in off and "'delta.enableTypeWidening': 'true'" in off
        assert "--full-refresh" in off
        narrowing = relation_configs.column_type_problem("bigint", "int", on)
        assert "not a widening" in narrowing and "cast the column to bigint" in narrowing
