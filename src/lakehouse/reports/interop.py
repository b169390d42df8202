"""The interoperability table of docs/interop.md, rendered from the interop tests' results.

`python_tests/integration/test_delta_interop.py` records what delta-rs and DuckDB read in
`target/interop.json` and fails when that differs from the committed `docs/interop.json`.
`make interop` runs it, then `python -m lakehouse.reports.interop` copies the recorded results
to `docs/interop.json` and renders them between the markers of `docs/interop.md`; a unit test
fails when the page and the results disagree.
"""

from __future__ import annotations

import json
import sys

from lakehouse.reports.sections import replace_section
from lakehouse.settings import PROJECT_DIR

START, END = "<!-- interop:start -->", "<!-- interop:end -->"
RECORDED = PROJECT_DIR / "target" / "interop.json"
RESULTS = PROJECT_DIR / "docs" / "interop.json"
PAGE = PROJECT_DIR / "docs" / "interop.md"
CHECKS = ("latest", "latest_sql", "time_travel", "change_data_feed")  # delta-rs
DUCKDB_CHECKS = ("duckdb_latest", "duckdb_time_travel")


def _cell(result: str) -> str:
    return {"same": "✅ same rows", "not applicable": "–"}.get(result, f"❌ {result}")


def render_table(results: dict) -> str:
    engines = results["engines"]
    lines = [
        f"Read by {engines['reader']} and compared with {engines['reference']} "
        f"(generated from `docs/interop.json` by `make interop`; do not edit by hand).",
        "",
        "| table | Delta features (protocol) | latest: `to_pyarrow_table` | latest: SQL "
        "(`QueryBuilder`) | time travel (SQL, one version back) | change data feed (`load_cdf`) |",
        "|---|---|---|---|---|---|",
    ]
    for table in sorted(results["tables"]):
        entry = results["tables"][table]
        features = ", ".join(f"`{f}`" for f in entry["features"]) or "–"
        cells = " | ".join(_cell(entry[check]) for check in CHECKS)
        lines.append(f"| `{table}` | {features} | {cells} |")
    lines += [
        "",
        f"Read by {engines['second_reader']}, compared with the same Spark reads (the "
        "extension has no change-data-feed reader):",
        "",
        "| table | latest: `delta_scan` | time travel (`version =>`, one version back) |",
        "|---|---|---|",
    ]
    for table in sorted(results["tables"]):
        entry = results["tables"][table]
        cells = " | ".join(_cell(entry[check]) for check in DUCKDB_CHECKS)
        lines.append(f"| `{table}` | {cells} |")
    return "\n".join(lines)


def render_page(page: str, results: dict) -> str:
    return replace_section(page, START, END, render_table(results))


def main() -> int:
    results = json.loads(RECORDED.read_text())
    RESULTS.write_text(json.dumps(results, indent=2, sort_keys=True) + "\n")
    PAGE.write_text(render_page(PAGE.read_text(), results))
    print(f"docs/interop.json and docs/interop.md updated from {RECORDED}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
