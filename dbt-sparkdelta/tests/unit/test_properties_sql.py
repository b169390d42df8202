"""What a model's config becomes on its Delta table: properties, features, constraints,
column defaults, and the ALTERs that reconcile an existing table with a changed config."""

from __future__ import annotations

import hashlib

import pytest


def test_properties_features_and_constraints_from_one_config(macros):
    macros.config.update(
        tblproperties={"delta.enableChangeDataFeed": True, "delta.logRetentionDuration": "30 days"},
        delta_features=["rowTracking", "rowTracking"],
        column_defaults={"status": "'new'"},
    )
    macros.model["constraints"] = [{"type": "check", "name": "positive", "expression": "x > 0"}]
    macros.model["columns"] = {
        "id": {"constraints": [{"type": "not_null"}, {"type": "primary_key"}]},
    }
    properties = macros.get_delta_table_properties(warn=False)
    assert properties == {
        # a boolean is written as Delta writes it
        "delta.enableChangeDataFeed": "true",
        "delta.logRetentionDuration": "30 days",
        "dbt.constraint.primary_key_id": "primary_key (id)",
        "sparkdelta.managed_properties": (
            "dbt.constraint.primary_key_id,delta.enableChangeDataFeed,delta.logRetentionDuration"
        ),
        "delta.feature.rowTracking": "supported",
        "delta.feature.allowColumnDefaults": "supported",
        "delta.constraints.positive": "x > 0",
        "delta.constraints.id_not_null": "`id` is not null",
        "sparkdelta.managed_constraints": "id_not_null,positive",
    }
    assert macros.warnings == []


def test_a_config_without_any_of_it_still_records_that_it_manages_nothing(macros):
    assert macros.get_delta_table_properties() == {
        "sparkdelta.managed_properties": "",
        "sparkdelta.managed_constraints": "",
    }


@pytest.mark.parametrize(
    "key", ["delta.constraints.x", "delta.feature.rowTracking", "sparkdelta.managed_properties"]
)
def test_managed_keys_are_refused_in_tblproperties(macros, key):
    macros.config.update(tblproperties={key: "1"})
    with pytest.raises(macros.error, match=f"model.shop.orders: set `{key}` through"):
        macros.get_delta_table_properties()


def test_tblproperties_must_be_a_mapping(macros):
    macros.config.update(tblproperties=["delta.appendOnly"])
    with pytest.raises(macros.error, match="`tblproperties` must be a mapping"):
        macros.get_delta_table_properties()


def test_features_are_validated_and_a_single_name_is_a_list(macros):
    assert macros.get_delta_features(macros.model, {"delta_features": "deletionVectors"}) == [
        "deletionVectors"
    ]
    with pytest.raises(macros.error, match="unknown Delta table feature `rowTrack`") as refused:
        macros.get_delta_features(macros.model, {"delta_features": ["rowTrack"]})
    assert "Known features: allowColumnDefaults, appendOnly" in str(refused.value)


def test_constraints_check_names_and_not_null_on_the_model(macros):
    macros.model["constraints"] = [
        {"type": "not_null", "columns": ["a", "b"]},
        {"type": "check", "expression": "a < b"},
        {"type": "unique", "columns": ["a"]},  # unenforced: not a Delta constraint
    ]
    digest = hashlib.md5(b"a < b").hexdigest()[:8]
    assert macros.get_delta_constraints(macros.model) == {
        "a_not_null": "`a` is not null",
        "b_not_null": "`b` is not null",
        f"check_{digest}": "a < b",
    }


@pytest.mark.parametrize(
    ("constraint", "message"),
    [
        ({"type": "check"}, "a check constraint needs an `expression`"),
        ({"type": "default"}, "constraint type `default` is not supported"),
        ({"type": "not_null", "columns": ["a b"]}, "Invalid not_null column of model.shop.orders"),
    ],
)
def test_constraints_delta_cannot_take_are_refused(macros, constraint, message):
    macros.model["constraints"] = [constraint]
    with pytest.raises(macros.error, match=message):
        macros.get_delta_constraints(macros.model)


def test_unenforced_constraints_are_recorded_and_warned_about(macros):
    macros.model["constraints"] = [
        {
            "type": "foreign_key",
            "columns": ["customer_id"],
            "to": "dim_customers",
            "to_columns": ["id"],
        },
        {"type": "primary_key", "name": "order pk", "columns": ["id"]},
    ]
    found = macros.get_unenforced_constraints(macros.model)
    assert found == {
        "dbt.constraint.foreign_key_customer_id": (
            "foreign_key (customer_id) references dim_customers (id)"
        ),
        # a name that is not an identifier gets one made from its hash
        "dbt.constraint.primary_key_"
        + hashlib.md5(b"order pk").hexdigest()[:8]: "primary_key (id)",
    }
    [warning] = macros.warnings
    assert warning.startswith("Model model.shop.orders: Delta Lake does not enforce foreign_key")
    assert "dbt.constraint.foreign_key_customer_id" in warning
    macros.warnings.clear()
    macros.get_unenforced_constraints(macros.model, warn=False)
    assert macros.warnings == []


def test_column_defaults_are_validated_and_lower_cased(macros):
    assert macros.get_column_defaults(macros.model, {"column_defaults": {"Status": " 'new' "}}) == {
        "status": "'new'"
    }
    with pytest.raises(macros.error, match="`column_defaults` of status is empty"):
        macros.get_column_defaults(macros.model, {"column_defaults": {"status": " "}})
    with pytest.raises(macros.error, match="must map column names"):
        macros.get_column_defaults(macros.model, {"column_defaults": ["status"]})


def test_column_defaults_sql_drops_the_removed_and_sets_the_changed(macros, relation):
    statements = macros.get_column_defaults_sql(
        relation("analytics", "orders"),
        {"status": "'open'", "amount": "0"},
        {"status": "'new'", "amount": "0", "note": "''"},
    )
    assert statements == [
        "alter table `analytics`.`orders` alter column `note` drop default",
        "alter table `analytics`.`orders` alter column `status` set default 'open'",
    ]


def test_reconcile_touches_only_what_the_project_manages(macros, relation):
    table = relation("analytics", "orders")
    desired = {
        "delta.enableChangeDataFeed": "true",
        "delta.appendOnly": "false",
        "sparkdelta.managed_properties": "delta.appendOnly,delta.enableChangeDataFeed",
        "delta.constraints.positive": "amount > 0",
        "delta.constraints.id_not_null": "`id` is not null",
        "sparkdelta.managed_constraints": "id_not_null,positive",
    }
    current = {
        "delta.enableChangeDataFeed": "true",  # unchanged: not set again
        "delta.logRetentionDuration": "interval 7 days",  # removed from the config: unset
        "delta.minReaderVersion": "3",  # Delta's own: never touched
        "sparkdelta.managed_properties": "delta.enableChangeDataFeed,delta.logRetentionDuration",
        "delta.constraints.positive": "amount >= 0",  # changed: dropped and added
        "delta.constraints.old": "x is not null",  # left the config: dropped
        "sparkdelta.managed_constraints": "old,positive",
    }
    statements = macros.get_reconcile_delta_table_sql(table, desired, current, ["day"], [])
    # removals first, then the SET that records what is managed now, then the additions
    assert [" ".join(s.split()) for s in statements] == [
        "alter table `analytics`.`orders` unset tblproperties if exists "
        "('delta.logRetentionDuration')",
        "alter table `analytics`.`orders` drop constraint if exists `old`",
        "alter table `analytics`.`orders` drop constraint if exists `positive`",
        "alter table `analytics`.`orders` set tblproperties ( "
        "'delta.appendOnly' = 'false', "
        "'sparkdelta.managed_constraints' = 'id_not_null,positive', "
        "'sparkdelta.managed_properties' = 'delta.appendOnly,delta.enableChangeDataFeed' )",
        "alter table `analytics`.`orders` add constraint `positive` check (amount > 0)",
        "alter table `analytics`.`orders` add constraint `id_not_null` check (`id` is not null)",
        "alter table `analytics`.`orders` cluster by (`day`)",
    ]
    assert macros.get_reconcile_delta_table_sql(table, current, current, [], []) == []
    assert macros.get_reconcile_delta_table_sql(table, {}, {}, [], ["day"]) == [
        "alter table `analytics`.`orders` cluster by none"
    ]
