"""The README's interoperability table, rendered from the results the interop tests record.

`python_tests/integration/test_delta_interop.py` writes `docs/interop.json`; `make interop`
(or `python -m lakehouse.interop`) renders it between the README's interop markers, and a unit
test fails when the README and the results disagree.
"""

from __future__ import annotations

import json
import sys

from lakehouse.reports.sections import replace_section
from lakehouse.settings import PROJECT_DIR

START, END = "<!-- interop:start -->", "<!-- interop:end -->"
RESULTS = PROJECT_DIR / "docs" / "interop.json"
README = PROJECT_DIR / "README.md"
CHECKS = ("latest", "latest_sql", "time_travel", "change_data_feed")


def _cell(result: str) -> str:
    return {"same": "✅ same rows", "not applicable": "–"}.get(result, f"❌ {result}")


def render_table(results: dict) -> str:
    engines = results["engines"]
    lines = [
        f"Read by {engines['reader']} and compared with {engines['reference']} "
        f"(generated from `docs/interop.json` by the interop tests; do not edit by hand).",
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
    return "\n".join(lines)


def render_readme(readme: str, results: dict) -> str:
    return replace_section(readme, START, END, render_table(results))


def main() -> int:
    results = json.loads(RESULTS.read_text())
    README.write_text(render_readme(README.read_text(), results))
    print(f"README.md interoperability table updated from {RESULTS.relative_to(PROJECT_DIR)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
