"""The analyst's loop's pure parts: the development schema's name, the diff's arguments, the
missing production state, sizes (no Spark)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from lakehouse.dbt_runner import environment
from lakehouse.dev import (
    DIFF_FLAGS,
    DevLoop,
    DevLoopError,
    OperationLog,
    dev_schema_name,
    human_bytes,
    operation_error,
)


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
        "argument_names": DIFF_FLAGS,
    }
    assert loop.diff_args("fct_orders", ["order_id"], True)["key"] == ["order_id"]
    # The messages name the CLI's flags, not the run-operation's arguments.
    assert DIFF_FLAGS["key"] == "--key" and DIFF_FLAGS["version_b"] == "--version-b"


def test_the_diff_options_pass_through_and_versions_compare_production_with_itself(tmp_path):
    loop = DevLoop(tmp_path, "lakehouse", "dev_ann", tmp_path / "state")
    args = loop.diff_args(
        "fct_orders", samples=3, sample_order="random", seed=7, save_to="d", version=None
    )
    assert {k: args[k] for k in ("samples", "sample_order", "seed", "save_to")} == {
        "samples": 3,
        "sample_order": "random",
        "seed": 7,
        "save_to": "d",
    }
    assert "version" not in args and args["b"] == "dev_ann.fct_orders"
    versions = loop.diff_args("fct_orders", version=3, version_b=5)
    assert (versions["a"], versions["version"], versions["version_b"]) == (
        "lakehouse.fct_orders",
        3,
        5,
    )
    assert "b" not in versions
    with pytest.raises(DevLoopError, match="--version-b compares two versions.*--version too"):
        loop.diff_args("fct_orders", version_b=5)


@pytest.mark.parametrize(
    "raised, said",
    [
        (
            "Runtime Error\n  diff_relations: data differs: 1 removed, 0 added, 2 changed",
            "diff_relations: data differs: 1 removed, 0 added, 2 changed",
        ),
        (
            "Compilation Error in macro diff_relations (macros/diff/diff_relations.sql)\n"
            '  Invalid --key column "x;": use letters\n  \n  > in macro diff_relations '
            "(macros/diff/diff_relations.sql)\n  > called by <Unknown>",
            'Invalid --key column "x;": use letters',
        ),
        (
            "Runtime Error\n  Runtime Error in macro diff_relations "
            "(macros/diff/diff_relations.sql)\n"
            "    diff_relations: key column nope is not a column of a. Give --key.",
            "diff_relations: key column nope is not a column of a. Give --key.",
        ),
        (
            "Runtime Error\n  drop_schema (dry run): would drop schema d. "
            "Pass dry_run: false to drop it.",
            "drop_schema (dry run): would drop schema d. Run `lakehouse dev drop --yes` to "
            "drop it.",
        ),
    ],
)
def test_an_operation_error_is_said_without_dbts_frame_in_the_clis_words(raised, said):
    assert operation_error(raised) == said


def test_the_operation_log_keeps_lines_errors_and_the_diff_result():
    said = OperationLog()
    for name, msg in [
        ("JinjaLogInfo", "drop_schema (dry run): would drop x. Pass dry_run: false to drop it."),
        ("JinjaLogInfo", 'diff_relations result: {"differs": true, "removed": 1}'),
        ("MainReportVersion", "Running with dbt"),
    ]:
        said(SimpleNamespace(info=SimpleNamespace(name=name, msg=msg)))
    said(
        SimpleNamespace(
            info=SimpleNamespace(name="RunningOperationCaughtError", msg=""),
            data=SimpleNamespace(exc="Runtime Error\n  diff_relations: invalid --seed -1"),
        )
    )
    assert said.lines() == [
        "drop_schema (dry run): would drop x. Run `lakehouse dev drop --yes` to drop it."
    ]
    assert said.diff_result() == {"differs": True, "removed": 1}
    assert said.errors == ["diff_relations: invalid --seed -1"]
    assert OperationLog().diff_result() is None


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


def test_the_build_shows_dbts_node_lines_but_not_its_skips_nor_errors_full_text():
    from lakehouse.dev import BuildLog

    def event(name: str, msg: str, level: str = "info") -> SimpleNamespace:
        return SimpleNamespace(info=SimpleNamespace(name=name, msg=msg, level=level))

    shown: list[str] = []
    log = BuildLog(write=shown.append)
    for said in [
        event("FoundStats", "Found 24 models, 60 data tests, 2 unit tests"),
        event("LogStartLine", "1 of 3 START unit_test fct_orders::fct_orders_sums"),
        event("LogTestResult", "1 of 3 \x1b[31mERROR\x1b[0m fct_orders::fct_orders_sums", "error"),
        event("SkippingDetails", "2 of 3 SKIP relation dev_ann.fct_orders"),
        event("LogSkipBecauseError", "SKIP relation dev_ann.fct_orders due to error", "error"),
        event("RunResultError", "  Runtime Error in unit_test ... == SQL == ...", "error"),
        event("SQLCompiledPath", "  compiled code at target/compiled/x.sql"),
        event("JinjaLogWarning", "a model's warning", "warn"),
        event("StatsLine", "Done. PASS=0 WARN=0 ERROR=1 SKIP=2 NO-OP=0 TOTAL=3"),
    ]:
        log(said)
    assert shown == [
        "Found 24 models, 60 data tests, 2 unit tests",
        "1 of 3 ERROR fct_orders::fct_orders_sums",
        "a model's warning",
        "Done. PASS=0 WARN=0 ERROR=1 SKIP=2 NO-OP=0 TOTAL=3",
    ]


def test_each_schema_and_target_keeps_its_own_dbt_target_folder(tmp_path):
    """dbt re-parses the whole project when the profile's schema or target changed since its
    last parse: the drop (production's schema) must not cost the next step a parse."""
    loop = DevLoop(tmp_path, "lakehouse", "dev_ann", tmp_path / "state")
    with environment({"LAKEHOUSE_TARGET": "thrift"}):
        folders = {loop.target_dir("dev_ann"), loop.target_dir("lakehouse")}
    with environment({"LAKEHOUSE_TARGET": ""}):
        folders.add(loop.target_dir("dev_ann"))
    assert folders == {
        tmp_path / "target" / "thrift_dev_ann",
        tmp_path / "target" / "thrift_lakehouse",
        tmp_path / "target" / "local_dev_ann",
    }
