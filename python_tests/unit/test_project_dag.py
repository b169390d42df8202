"""The project's DAG, from `dbt parse` (no Spark): the commit audit comes after every table."""

from __future__ import annotations

import json

from dbt.cli.main import dbtRunner

from python_tests.conftest import PROJECT_DIR

AUDIT = "model.lakehouse.delta_commit_audit"


def test_the_commit_audit_is_built_after_every_table(tmp_path):
    target = tmp_path / "target"
    result = dbtRunner().invoke(
        ["parse", "--project-dir", str(PROJECT_DIR), "--profiles-dir", str(PROJECT_DIR),
         "--target-path", str(target), "--log-path", str(tmp_path / "logs"), "--quiet"]
    )  # fmt: skip
    assert result.success, result.exception
    manifest = json.loads((target / "manifest.json").read_text())
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
