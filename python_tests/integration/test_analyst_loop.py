"""The analyst's loop end to end (docs/analyst.md), on the embedded target and on the endpoint
(`thrift`): production is the session's shop (built batch by batch) or the shop built through
the session's endpoint, its state that build's manifest; a development schema of shallow
clones; a model's SQL edited; a slim build of what changed; a keyed diff reporting exactly the
rows and columns the edit changes (checked against a recompute); a second edit with a syntax
error reported at the line of the model's file; the development schema dropped and production
untouched. On the endpoint one step runs as a `lakehouse` process of its own, which must find
the running endpoint by itself. On the embedded target also the diff's cases that no target
changes: a new model (production has no such relation) and a model rebuilt from unedited
inputs, which does not differ from production's own build.

The loop runs through the `lakehouse dev` commands on a copy of the project (the edit must not
touch the repository), in a throw-away development schema.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from lakehouse.cli import main as lakehouse
from lakehouse.dbt_runner import copy_project, environment
from lakehouse.dev import DevLoop, OperationLog, footprint
from python_tests.conftest import unique_schema
from python_tests.integration.conftest import BuiltShop, table_versions

# The edit: shipped orders now count as final (a changed CASE in fct_orders).
EDITED_MODEL = "models/marts/fct_orders.sql"
BEFORE = "order_statuses.is_final as is_status_final,"
AFTER = (
    "case when orders.status = 'shipped' then true else order_statuses.is_final end"
    " as is_status_final,"
)


def built_tables(state: Path) -> set[str]:
    """The Delta tables production's build made (its manifest's tables, incremental models,
    seeds and snapshots): what `dev clone` clones."""
    manifest = json.loads((state / "manifest.json").read_text())
    return {
        node["alias"]
        for node in manifest["nodes"].values()
        if node["resource_type"] in ("model", "seed", "snapshot")
        and node["config"]["materialized"] in ("table", "incremental", "seed", "snapshot")
    }


def diff_result(loop: DevLoop, model: str) -> dict:
    """The summary diff_relations returns, from the JSON line it logs for scripts."""
    said = OperationLog()
    result = loop.diff(model, callbacks=[said])
    assert result.success, result.exception
    summary = said.diff_result()
    assert summary is not None, said.lines()
    return summary


# A model the analyst adds (its diff: production has no such relation).
NEW_MODEL = "models/marts/fct_order_sizes.sql"


# A syntax error in the edited model: one parenthesis too many on one line of fct_orders.
SYNTAX_BEFORE = "coalesce(order_totals.order_amount, 0) as order_amount,"
SYNTAX_AFTER = "coalesce(order_totals.order_amount, 0)) as order_amount,"


def check_syntax_error_is_reported_at_the_edited_line(project: Path, dev: str, capsys) -> None:
    """`lakehouse dev build` after an edit that breaks fct_orders' SQL: the unit test built on
    fct_orders runs first and hits the error in the model's SQL; the message names the model's
    file and the edited line (not the unit test, not a line of the compiled SQL), does not
    repeat the compiled SQL, and summarises the skipped nodes in one line."""
    edited = project / EDITED_MODEL
    lines = edited.read_text().splitlines()
    [line] = [n for n, text in enumerate(lines, 1) if SYNTAX_BEFORE in text]
    edited.write_text(edited.read_text().replace(SYNTAX_BEFORE, SYNTAX_AFTER))
    capsys.readouterr()
    assert lakehouse(["--project-dir", str(project), "dev", "build"]) == 2
    out, err = capsys.readouterr()
    said = out + err
    assert f"error: dbt build in {dev} failed:\n{EDITED_MODEL} line {line}: " in err, said
    assert "PARSE_SYNTAX_ERROR" in err, said
    assert f"    {line} | " in err and SYNTAX_AFTER in err, said
    assert "(found by unit test fct_orders_sums_lines_and_keeps_orders_without_lines" in err
    assert "check the data types" not in said
    # no compiled SQL: not Spark's echo of it, not the unit test's inputs, not a CREATE
    for compiled in ("== SQL", "^^^", "__dbt__cte__", "dbt_internal_unit_test", "create or"):
        assert compiled not in said, (compiled, said)
    assert "skipped None" not in said and "SKIP relation" not in said
    [skipped] = [text for text in err.splitlines() if " skipped: " in text]
    assert skipped.split()[1:3] == ["nodes", "skipped:"] and "fct_orders" in skipped, skipped
    assert len(said.splitlines()) <= 20, said


def run_loop(
    spark, project: Path, prod: str, dev: str, state: Path, capsys, cli_env: dict | None = None
) -> None:
    """Everything after production's build, the same on every target; with `cli_env` (the
    endpoint's home and ports, no LAKEHOUSE_TARGET) one step runs as a `lakehouse` process of
    its own, which must find and use the running endpoint."""
    prod_before = table_versions(spark, prod)
    tables = built_tables(state)
    assert {"fct_orders", "fct_customer_revenue", "order_statuses"} <= tables
    assert tables <= prod_before.keys()

    # A development schema of shallow clones: production's versions, no data file written.
    assert lakehouse(["--project-dir", str(project), "dev", "clone"]) == 0
    cloned = table_versions(spark, dev)
    assert cloned.keys() == tables
    for name in tables:
        version = prod_before[name]
        [clone] = spark.sql(f"describe history `{dev}`.`{name}`").collect()
        assert clone.operation == "CLONE", name
        assert clone.operationParameters["sourceVersion"] == str(version), name
        source = clone.operationParameters["source"].replace("`", "")
        assert source.endswith(f"{prod}.{name}"), (name, source)
    used = footprint(spark, dev)
    assert used.tables == len(tables) and used.data_bytes == 0 and used.unmeasured == ()

    # Edit one model; the slim build runs it and what is downstream of it, nothing else.
    edited = project / EDITED_MODEL
    assert BEFORE in edited.read_text()
    edited.write_text(edited.read_text().replace(BEFORE, AFTER))
    assert lakehouse(["--project-dir", str(project), "dev", "build"]) == 0
    loop = DevLoop(project, prod, dev, state)  # the CLI's loop, for its folders and the diff
    run_results = loop.target_dir(dev) / "run_results.json"
    built = json.loads(run_results.read_text())["results"]
    models = {r["unique_id"].split(".")[-1] for r in built if r["unique_id"].startswith("model.")}
    assert models == {
        "fct_orders",
        "fct_customer_revenue",
        "fct_order_payments",
        "fct_category_revenue",
        "delta_commit_audit",
    }

    # The diff reports exactly what the edit changes: recomputed from production's rows.
    expected = {
        r.order_id
        for r in spark.sql(
            f"select order_id from `{prod}`.fct_orders "
            "where status = 'shipped' and is_status_final is distinct from true"
        ).collect()
    }
    assert expected, "the batch has no shipped order: the edit would change nothing"
    summary = diff_result(loop, "fct_orders")
    rows = spark.sql(f"select count(*) as n from `{prod}`.fct_orders").collect()[0].n
    assert (summary["removed"], summary["added"]) == (0, 0)
    assert (summary["changed"], summary["unchanged"]) == (len(expected), rows - len(expected))
    changed_columns = {c: n for c, n in summary["column_changes"].items() if n}
    assert changed_columns == {"is_status_final": len(expected)}
    assert summary["samples"]["changed"]
    assert {s["key"]["order_id"] for s in summary["samples"]["changed"]} <= expected
    # ... and fails CI when asked to.
    diff = ["--project-dir", str(project), "dev", "diff"]
    if cli_env is None:
        assert lakehouse([*diff, "fct_orders", "--fail-on-diff"]) == 1
    else:  # as the analyst types it: a process of its own finds the running endpoint itself
        done = subprocess.run(
            [sys.executable, "-m", "lakehouse.cli", *diff, "fct_orders", "--fail-on-diff"],
            env=cli_env, capture_output=True, text=True, timeout=300,
        )  # fmt: skip
        assert done.returncode == 1, done.stdout + done.stderr
        assert "warm engine" not in done.stderr, done.stderr
        assert f"0 removed, 0 added, {len(expected)} changed" in done.stdout, done.stdout

    # diff_relations' cases that do not depend on the target (a new model here, an unedited
    # one below) run once, on the embedded target.
    once = cli_env is None
    if once:  # a new model, not in production: built in the development schema, summarised
        (project / NEW_MODEL).write_text(
            "select order_id, line_count from {{ ref('fct_orders') }}\n"
        )
        assert (
            lakehouse(["--project-dir", str(project), "dev", "build", "-s", "fct_order_sizes"]) == 0
        )
        capsys.readouterr()
        assert lakehouse([*diff, "fct_order_sizes", "--key", "order_id"]) == 0
        said = capsys.readouterr().out
        assert (
            f"data differs: a ({prod}.fct_order_sizes) does not exist; b ({dev}.fct_order_sizes) "
            f"is new: {rows} rows, 2 columns, key (order_id) unique"
        ) in said, said

    # A syntax error in the next edit is reported at the line of the model's file.
    check_syntax_error_is_reported_at_the_edited_line(project, dev, capsys)

    # Dropping: a dry run first (nothing dropped), then for real; production untouched.
    assert lakehouse(["--project-dir", str(project), "dev", "drop"]) == 0
    assert table_versions(spark, dev).keys() == tables | ({"fct_order_sizes"} if once else set())
    # The dry run ran in production's schema; the next step in yours keeps dbt's parse. A
    # model the slim build rebuilt (not a clone) whose inputs the edit leaves as they were does
    # not differ from production's own build (no failure with fail_on_diff).
    if once:
        [rebuilt] = spark.sql(f"describe history `{dev}`.fct_category_revenue limit 1").collect()
        assert rebuilt.operation != "CLONE", rebuilt.operation
        events: list[str] = []
        said = OperationLog()
        unedited = loop.diff(
            "fct_category_revenue",
            key=["order_date", "category"],
            fail_on_diff=True,
            callbacks=[said, lambda event: events.append(event.info.name)],
        )
        assert unedited.success, unedited.exception
        same = said.diff_result()
        category_rows = spark.sql(f"select count(*) from `{prod}`.fct_category_revenue").first()[0]
        assert (same["removed"], same["added"], same["changed"]) == (0, 0, 0), same
        assert same["unchanged"] == category_rows > 0, same
        assert "PartialParsingEnabled" in events and "UnableToPartialParse" not in events, events
    assert lakehouse(["--project-dir", str(project), "dev", "drop", "--yes"]) == 0
    assert dev not in {d.name for d in spark.catalog.listDatabases()}
    assert table_versions(spark, prod) == prod_before
    assert spark.sql(f"select count(*) as n from `{prod}`.fct_orders").collect()[0].n == rows


@pytest.fixture
def production(request) -> BuiltShop:
    """The session's shop fixture named by the parameter: built (once) in this test's set-up,
    so that --durations counts the build there and the loop in the call."""
    return request.getfixturevalue(request.param)


@pytest.mark.parametrize(
    "production",
    [
        pytest.param("shop", id="embedded"),
        pytest.param("endpoint_shop", id="endpoint", marks=pytest.mark.endpoint),
    ],
    indirect=True,
)
def test_loop(production: BuiltShop, tmp_path, capsys):
    """Production is the session's shop on the embedded target, or the shop built through
    the session's endpoint with plain dbt (`thrift`); its state is that build's manifest."""
    prod = production
    project = copy_project(tmp_path / "project")
    loop_env = {
        **prod.env,
        "LAKEHOUSE_SCHEMA": prod.project.schema,
        "LAKEHOUSE_BRONZE_SCHEMA": prod.project.bronze_schema,
        "LAKEHOUSE_DEV_SCHEMA": unique_schema("dev"),
        "LAKEHOUSE_PROD_STATE": str(prod.state_dir),
    }
    cli_env = None
    if prod.endpoint is not None:
        ep = prod.endpoint
        cli_env = {
            **os.environ,
            **loop_env,
            "LAKEHOUSE_HOME": str(ep.session.home),
            "LAKEHOUSE_THRIFT_PORT": str(ep.thrift_port),
            "LAKEHOUSE_SPARK_CONNECT_PORT": str(ep.connect_port),
        }
        cli_env.pop("LAKEHOUSE_TARGET")
    with environment(loop_env):
        run_loop(
            prod.project.spark,
            project,
            prod.project.schema,
            loop_env["LAKEHOUSE_DEV_SCHEMA"],
            prod.state_dir,
            capsys,
            cli_env,
        )
