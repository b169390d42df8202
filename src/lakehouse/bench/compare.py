"""`python -m lakehouse.bench.compare OLD NEW [OUT]`: two benchmark results (results.json of
`make bench`, e.g. with LAKEHOUSE_BENCH_OUT) on two stacks, side by side as a Markdown table
(lakehouse.bench.report.render_stack_comparison), printed or written to OUT."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from lakehouse.bench.report import render_stack_comparison


def main(argv: list[str]) -> int:
    if len(argv) not in (2, 3):
        print(__doc__, file=sys.stderr)
        return 2
    old, new = (json.loads(Path(path).read_text()) for path in argv[:2])
    table = render_stack_comparison(old, new)
    if len(argv) == 3:
        Path(argv[2]).write_text(table + "\n")
    else:
        print(table)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
