"""The columns of a table with identity / generated columns, decided without a JVM."""

from __future__ import annotations

import dataclasses

import pytest

from dbt.adapters.sparkdelta.generated_columns import (
    Column,
    GeneratedColumnsError,
    Identity,
    plan_columns,
)

MODEL = "model.shop.dim_products"
SELECT = [("product_id", "string"), ("ordered_at", "timestamp"), ("price", "decimal(10,2)")]


def plan(identity=None, generated=None, select=SELECT, contract=None) -> list[Column]:
    return plan_columns(MODEL, identity, generated, select, contract)


def test_identity_first_then_the_select_then_generated_columns_it_lacks():
    columns = plan(
        identity={"product_sk": {"start": 100, "step": 10}},
        generated={"order_date": {"expression": "cast(ordered_at as date)", "data_type": "date"}},
    )
    assert [(c.name, c.data_type, c.from_select) for c in columns] == [
        ("product_sk", "bigint", False),
        ("product_id", "string", True),
        ("ordered_at", "timestamp", True),
        ("price", "decimal(10,2)", True),
        ("order_date", "date", False),
    ]
    assert columns[0].identity == Identity(always=True, start=100, step=10)
    assert columns[-1].expression == "cast(ordered_at as date)"


def test_a_list_of_names_means_generated_always_from_1_by_1():
    (column, *_) = plan(identity=["product_sk"])
    assert column.identity == Identity(always=True, start=1, step=1)
    assert plan(identity="product_sk")[0].identity == Identity()


def test_a_generated_column_the_select_gives_keeps_its_type_and_is_inserted():
    columns = plan(generated={"PRICE": "round(price, 2)"})
    price = next(c for c in columns if c.name == "price")
    assert (price.data_type, price.expression, price.from_select) == (
        "decimal(10,2)",
        "round(price, 2)",
        True,
    )


def test_by_default_identity_may_come_from_the_select():
    columns = plan(identity={"sk": {"always": False}}, select=[("sk", "bigint"), ("a", "int")])
    (sk, _) = columns
    assert (sk.name, sk.from_select, sk.identity.always) == ("sk", True, False)


def test_the_contract_orders_the_columns_and_gives_a_generated_type():
    columns = plan(
        identity=["product_sk"],
        generated={"order_date": "cast(ordered_at as date)"},
        contract={
            "order_date": "date",
            "product_id": "string",
            "product_sk": "bigint",
            "ordered_at": "timestamp",
            "price": "decimal(10,2)",
        },
    )
    assert [c.name for c in columns] == [
        "order_date",
        "product_id",
        "product_sk",
        "ordered_at",
        "price",
    ]
    assert columns[0].data_type == "date"


def test_columns_round_trip_through_the_macros():
    (column, *_) = plan(identity={"product_sk": {"always": False, "start": 5}})
    assert Column.from_dict(dataclasses.asdict(column)) == column


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"identity": ["product_id"]}, "product_id is GENERATED ALWAYS.*leave it out"),
        ({"identity": {"sk": {"always": False}}, "select": [("sk", "int")]}, "must be bigint"),
        ({"identity": {"sk": {"step": 0}}}, "step cannot be 0"),
        ({"identity": {"sk": {"start": "1"}}}, "start must be an integer"),
        ({"identity": {"sk": {"seed": 1}}}, "takes `always`"),
        ({"identity": {"sk": {"always": "yes"}}}, "always must be true or false"),
        ({"identity": 3}, "must be a list of column names or a mapping"),
        ({"generated": {"d": "cast(ordered_at as date)"}}, "give generated_columns.d.data_type"),
        ({"generated": {"d": {"expr": "x"}}}, "must be a SQL expression"),
        ({"identity": ["x"], "generated": {"X": "1"}}, "both an identity and a generated"),
        ({"identity": ["sk"], "contract": {"product_id": "string"}}, "sk.* not declared"),
        ({"contract": {"product_id": "string", "gone": "int"}}, "declares gone"),
    ],
)
def test_bad_config_names_the_model_and_the_column(kwargs, message):
    with pytest.raises(GeneratedColumnsError, match=f"Model {MODEL}: .*{message}"):
        plan(**kwargs)
