"""The project's DAG, from `dbt parse` (no Spark): the commit audit comes after every table;
and the parse (of every dbt command) warns of nothing."""

from __future__ import annotations

import json

import pytest
from dbt.cli.main import dbtRunner

from python_tests.conftest import PROJECT_DIR

AUDIT = "model.lakehouse.delta_commit_audit"


@pytest.fixture(scope="module")
def parsed(tmp_path_factory) -> dict:
    """One full `dbt parse` of the project (a new target path: no partial parse): its manifest
    and the warnings it printed."""
    work = tmp_path_factory.mktemp("parse")
    warnings = []
    result = dbtRunner(
        callbacks=[lambda event: event.info.level == "warn" and warnings.append(event.info.msg)]
    ).invoke(
        ["parse", "--project-dir", str(PROJECT_DIR), "--profiles-dir", str(PROJECT_DIR),
         "--target-path", str(work / "target"), "--log-path", str(work / "logs"), "--quiet"]
    )  # fmt: skip
    assert result.success, result.exception
    return {"manifest": json.loads((work / "target" / "manifest.json").read_text()),
            "warnings": warnings}  # fmt: skip


def test_the_commit_audit_is_built_after_every_table(parsed):
    manifest = parsed["manifest"]
    upstream, frontier = set(), [AUDIT]
    while frontier:
        for parent in manifest["parent_map"][frontier.pop()]:
            if parent not in upstream:
                upstream.add(parent)
                frontier.append(parent)
    tables = {
        unique_id
        for unique_id, node in manifest["nodes"].items()
        if node["resource_type"] in ("model", "seed", "snapshot")
        and node["config"].get("materialized") != "view"
        and unique_id != AUDIT
    }
    assert tables - upstream == set(), "add a ref to these in models/audit/delta_commit_audit.py"


def test_a_parse_of_the_project_its_adapter_and_packages_warns_of_nothing(parsed):
    # dbt-core 1.12's behaviour flags are on by default (validate_macro_args among them): a
    # warning here is printed by every dbt command a user types
    assert parsed["warnings"] == []
