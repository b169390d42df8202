"""docs/interop.md's interoperability table is generated from the interop tests' results."""

from __future__ import annotations

import json

import pytest

from lakehouse.reports.interop import PAGE, RESULTS, render_page, render_table

RESULTS_EXAMPLE = {
    "engines": {"reference": "Spark", "reader": "delta-rs", "second_reader": "DuckDB"},
    "tables": {
        "b": {
            "features": ["deletionVectors"],
            "latest": "unsupported: deletionVectors",
            "latest_sql": "same",
            "time_travel": "not applicable",
            "change_data_feed": "same",
            "duckdb_latest": "same",
            "duckdb_time_travel": "not applicable",
        },
        "a": {
            "features": [],
            "latest": "same",
            "latest_sql": "same",
            "time_travel": "same",
            "change_data_feed": "not applicable",
            "duckdb_latest": "different rows (1 vs Spark's 2)",
            "duckdb_time_travel": "same",
        },
    },
}


def test_render_table_has_one_row_per_table_and_reader_in_order():
    rows = [line for line in render_table(RESULTS_EXAMPLE).splitlines() if line.startswith("| `")]
    assert rows == [
        "| `a` | – | ✅ same rows | ✅ same rows | ✅ same rows | – |",
        "| `b` | `deletionVectors` | ❌ unsupported: deletionVectors | ✅ same rows | – "
        "| ✅ same rows |",
        "| `a` | ❌ different rows (1 vs Spark's 2) | ✅ same rows |",
        "| `b` | ✅ same rows | – |",
    ]


def test_render_page_replaces_only_between_the_markers():
    readme = "intro\n<!-- interop:start -->\nold\n<!-- interop:end -->\noutro\n"
    rendered = render_page(readme, RESULTS_EXAMPLE)
    assert rendered.startswith("intro\n<!-- interop:start -->\n")
    assert rendered.endswith("<!-- interop:end -->\noutro\n")
    assert "old" not in rendered
    assert render_page(rendered, RESULTS_EXAMPLE) == rendered


def test_render_page_without_markers_is_an_error():
    with pytest.raises(ValueError, match="interop:start"):
        render_page("no markers", RESULTS_EXAMPLE)


def test_page_table_matches_the_committed_results():
    results = json.loads(RESULTS.read_text())
    page = PAGE.read_text()
    assert render_page(page, results) == page, "run `make interop`"
