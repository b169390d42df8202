"""The analyst's loop's pure parts: the development schema's name, the diff's arguments, the
missing production state, sizes (no Spark)."""

from __future__ import annotations

import pytest

from lakehouse.dbt_runner import environment
from lakehouse.dev import DevLoop, DevLoopError, dev_schema_name, human_bytes


def test_the_dev_schema_is_the_env_var_else_dev_and_the_user_name(monkeypatch):
    monkeypatch.setattr("getpass.getuser", lambda: "Ann-Marie.O'Neil")
    with environment({"LAKEHOUSE_DEV_SCHEMA": ""}):
        assert dev_schema_name("lakehouse") == "dev_ann_marie_o_neil"
    with environment({"LAKEHOUSE_DEV_SCHEMA": "sandbox_ann"}):
        assert dev_schema_name("lakehouse") == "sandbox_ann"


@pytest.mark.parametrize("name", ["lakehouse", "LAKEHOUSE", "dev; drop", "1dev"])
def test_production_or_an_invalid_name_is_refused(name):
    with environment({"LAKEHOUSE_DEV_SCHEMA": name}), pytest.raises(DevLoopError) as refused:
        dev_schema_name("lakehouse")
    assert "LAKEHOUSE_DEV_SCHEMA" in str(refused.value)


def test_the_diff_compares_production_a_with_development_b(tmp_path):
    loop = DevLoop(tmp_path, "lakehouse", "dev_ann", tmp_path / "state")
    assert loop.diff_args("fct_orders", None, False) == {
        "a": "lakehouse.fct_orders",
        "b": "dev_ann.fct_orders",
        "fail_on_diff": False,
    }
    assert loop.diff_args("fct_orders", ["order_id"], True)["key"] == ["order_id"]


def test_no_production_state_says_how_to_make_one(tmp_path):
    loop = DevLoop(tmp_path, "lakehouse", "dev_ann", tmp_path / "state")
    for step in (loop.clone, loop.build):
        with pytest.raises(DevLoopError) as refused:
            step()
        message = str(refused.value)
        assert str(tmp_path / "state") in message and "--target-path" in message
        assert "make run" in message and "LAKEHOUSE_PROD_STATE" in message


def test_sizes_read_as_people_write_them():
    assert human_bytes(0) == "0 B"
    assert human_bytes(1023) == "1023 B"
    assert human_bytes(430_000) == "419.9 KiB"
    assert human_bytes(3 * 1024**3) == "3.0 GiB"
