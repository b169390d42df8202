"""Benchmark figures: statistics, targets, the Markdown table and the plot.

Pure functions over the results dictionary that `lakehouse.bench.run` writes to
`docs/bench/results.json` (only the plot needs matplotlib), so they are unit-tested without
Spark, and `docs/bench/results.md` and `results.png` can be regenerated from a results file:
`python -m lakehouse.bench.report`. Only measured figures are rendered; what limits a target
is explained by hand in docs/benchmarks.md.
"""

from __future__ import annotations

import json
import statistics
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from lakehouse.settings import PROJECT_DIR

OUT_DIR = PROJECT_DIR / "docs" / "bench"
GIB = 1024**3


def summarize(samples: Sequence[float]) -> dict:
    """Median and spread of repeated measurements: n, median, min, max and the spread
    (max - min) relative to the median."""
    if not samples:
        raise ValueError("no samples to summarize")
    median = statistics.median(samples)
    low, high = min(samples), max(samples)
    return {
        "n": len(samples),
        "median": median,
        "min": low,
        "max": high,
        "spread": (high - low) / median if median else 0.0,
    }


def paired_ratios(numerators: Sequence[float], denominators: Sequence[float]) -> list[float]:
    """Ratio of two timings per repetition (both taken on the same data in the same run)."""
    if len(numerators) != len(denominators):
        raise ValueError("paired timings need as many numerators as denominators")
    return [a / b for a, b in zip(numerators, denominators, strict=True)]


@dataclass(frozen=True)
class Scenario:
    key: str
    title: str
    measured: str  # label of the timing in the numerator
    baseline: str  # label of the timing in the denominator


SCENARIOS = [
    Scenario(
        "incremental_vs_full",
        "1. silver MERGE model `int_order_lines_deduplicated`",
        "incremental run, 1% change batch",
        "full refresh",
    ),
    Scenario(
        "cdf_vs_recompute",
        "2. gold aggregate `fct_daily_revenue`",
        "maintained from the change data feed, 1% change",
        "full recompute",
    ),
    Scenario(
        "deletion_vectors",
        "3. 0.1% update MERGE into the order lines",
        "deletion vectors on",
        "deletion vectors off",
    ),
    Scenario(
        "dbt_overhead",
        "5. silver + gold SQL models",
        "`dbt build`",
        "the same compiled SQL run directly with `spark.sql`",
    ),
]
TIMED = {scenario.key: scenario for scenario in SCENARIOS}


@dataclass(frozen=True)
class Target:
    key: str
    text: str
    limit: float


TARGETS = [
    Target(
        "incremental_ratio",
        "incremental run with a 1% change ≤ 15% of the full refresh",
        0.15,
    ),
    Target(
        "cdf_ratio",
        "CDF-maintained aggregate ≤ 20% of a full recompute",
        0.20,
    ),
    Target(
        "files_read_fraction",
        "clustered selective query reads ≤ 10% of the files after OPTIMIZE",
        0.10,
    ),
    Target(
        "dbt_overhead",
        "dbt overhead ≤ 1.3× the same SQL run directly",
        1.3,
    ),
    Target(
        "peak_memory",
        "peak memory of the run (Python + JVM) under 8 GiB",
        8 * GIB,
    ),
]


def target_values(scale: dict, peak_rss_bytes: float) -> dict[str, float | None]:
    """The figure each target is judged on, at one scale (medians of the paired ratios)."""
    scenarios = scale.get("scenarios", {})

    def ratio(key: str) -> float | None:
        entry = scenarios.get(key)
        return entry["ratio"]["median"] if entry else None

    query = scenarios.get("clustered_query")
    files = None
    if query:
        after = query["after"]
        files = after["files_read"] / after["files_total"] if after["files_total"] else None
    return {
        "incremental_ratio": ratio("incremental_vs_full"),
        "cdf_ratio": ratio("cdf_vs_recompute"),
        "files_read_fraction": files,
        "dbt_overhead": ratio("dbt_overhead"),
        "peak_memory": peak_rss_bytes,
    }


def _format_value(key: str, value: float) -> str:
    if key == "peak_memory":
        return f"{value / GIB:.2f} GiB"
    if key == "dbt_overhead":
        return f"{value:.2f}×"
    return f"{value:.1%}"


def evaluate_targets(results: dict) -> list[dict]:
    """Each target at the largest scale of the run: value, met, and by how much it is missed."""
    largest = max(results["scales"], key=lambda s: s["order_lines"])
    values = target_values(largest, results["peak_rss_bytes"])
    verdicts = []
    for target in TARGETS:
        value = values[target.key]
        entry = {"key": target.key, "target": target.text, "value": value, "limit": target.limit}
        if value is None:
            entry.update(met=None, verdict="not measured")
        elif value <= target.limit:
            entry.update(met=True, verdict=f"met: {_format_value(target.key, value)}")
        else:
            if target.key in ("dbt_overhead", "peak_memory"):
                by = f"{value / target.limit:.2f}× the limit"
            else:
                by = f"{(value - target.limit) * 100:.1f} percentage points"
            entry.update(
                met=False,
                verdict=f"missed by {by}: {_format_value(target.key, value)}",
            )
        verdicts.append(entry)
    return verdicts


def _seconds(summary: dict) -> str:
    return f"{summary['median']:.2f} s ({summary['min']:.2f}–{summary['max']:.2f})"


def _ratio(summary: dict) -> str:
    return f"{summary['median']:.3f} ({summary['min']:.3f}–{summary['max']:.3f})"


def render_table(results: dict) -> str:
    """The Markdown table of every scenario at every scale."""
    scales = sorted(results["scales"], key=lambda s: s["order_lines"])
    lines = [
        "| scenario | order lines | measured: median s (min–max) | baseline: median s "
        "(min–max) | ratio: median (min–max) | n |",
        "|---|---:|---|---|---|---:|",
    ]
    for scenario in SCENARIOS:
        for scale in scales:
            entry = scale["scenarios"].get(scenario.key)
            if not entry:
                continue
            lines.append(
                f"| {scenario.title}: {scenario.measured} vs {scenario.baseline} "
                f"| {scale['order_lines']:,} | {_seconds(entry['measured'])} "
                f"| {_seconds(entry['baseline'])} | {_ratio(entry['ratio'])} "
                f"| {entry['ratio']['n']} |"
            )
    for scale in scales:
        query = scale["scenarios"].get("clustered_query")
        if not query:
            continue
        before, after = query["before"], query["after"]
        lines.append(
            f"| 4. selective query `{query['predicate']}` on `{query['table']}`, "
            f"Z-ordered by `{query['column']}`: files read / total files, before vs after "
            f"`OPTIMIZE` | {scale['order_lines']:,} "
            f"| after: {after['files_read']} / {after['files_total']} "
            f"| before: {before['files_read']} / {before['files_total']} "
            f"| {_files_fraction(after)} vs {_files_fraction(before)} | 1 |"
        )
    return "\n".join(lines)


def _files_fraction(side: dict) -> str:
    return f"{side['files_read'] / side['files_total']:.1%}" if side["files_total"] else "–"


def render_machine(machine: dict) -> str:
    # sorted: results.json is written with sorted keys, and the section must render the same
    # from memory and from the file
    versions = ", ".join(
        f"{name} {version}"
        for name, version in sorted(machine["versions"].items(), key=lambda kv: kv[0].lower())
    )
    return (
        f"{machine['cpu_model']}, {machine['cores']} cores, {machine['memory_gib']:.0f} GiB RAM, "
        f"{machine['os']}; load average {machine['load_average']} at the start; {versions}"
    )


def render_markdown(results: dict) -> str:
    """results.md: machine, configuration, the table, the targets."""
    config = results["config"]
    lines = [
        f"Benchmark of {results['finished_at']} (`make bench`, {results['duration_s'] / 60:.1f}"
        f" min; generated from `docs/bench/results.json`, do not edit by hand).",
        "",
        f"Machine: {render_machine(results['machine'])}.",
        "",
        f"Spark {config['spark_master']}, driver memory {config['driver_memory']}, "
        f"{config['shuffle_partitions']} shuffle partitions; change batches of "
        f"{config['change_fraction']:.1%} (scenarios 1, 2) and {config['update_fraction']:.1%} "
        f"(scenario 3) of the order lines; ratios are per repetition (both timings on the same "
        f"data), then the median and the range over n repetitions. Peak memory (Python + JVM "
        f"resident set, sampled every {config['memory_sample_s']} s): "
        f"{results['peak_rss_bytes'] / GIB:.2f} GiB.",
        "",
        render_table(results),
        "",
        f"Targets, judged at {max(s['order_lines'] for s in results['scales']):,} order lines:",
        "",
        "| target | result |",
        "|---|---|",
    ]
    for verdict in evaluate_targets(results):
        mark = {True: "✅", False: "❌", None: "–"}[verdict["met"]]
        lines.append(f"| {verdict['target']} | {mark} {verdict['verdict']} |")
    return "\n".join(lines)


def plot(results: dict, path: Path) -> None:
    """results.png: per scenario, time (median, min–max bars) against table size."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    scales = sorted(results["scales"], key=lambda s: s["order_lines"])
    figure, axes = plt.subplots(2, 3, figsize=(15, 8.5))
    for axis, scenario in zip(axes.flat, SCENARIOS, strict=False):
        for side, label in (("measured", scenario.measured), ("baseline", scenario.baseline)):
            points = [
                (s["order_lines"], s["scenarios"][scenario.key][side])
                for s in scales
                if scenario.key in s["scenarios"]
            ]
            if not points:
                continue
            x = [p[0] for p in points]
            y = [p[1]["median"] for p in points]
            errors = [
                [p[1]["median"] - p[1]["min"] for p in points],
                [p[1]["max"] - p[1]["median"] for p in points],
            ]
            axis.errorbar(x, y, yerr=errors, marker="o", capsize=3, label=label)
        axis.set(xscale="log", yscale="log", title=scenario.title, xlabel="order lines")
        axis.set_ylabel("seconds")
        axis.title.set_fontsize(9)
        axis.legend(fontsize=7)
        axis.grid(True, which="both", alpha=0.3)
    query_axis, memory_axis = axes.flat[4], axes.flat[5]
    points = [(s["order_lines"], s["scenarios"]["clustered_query"]) for s in scales
              if "clustered_query" in s["scenarios"]]  # fmt: skip
    for side in ("before", "after"):
        query_axis.plot(
            [p[0] for p in points],
            [p[1][side]["files_read"] / max(1, p[1][side]["files_total"]) * 100 for p in points],
            marker="o",
            label=f"{side} OPTIMIZE ZORDER",
        )
    query_axis.set(
        xscale="log",
        title="4. selective query: % of the table's files read",
        xlabel="order lines",
        ylabel="% of files read",
        ylim=(0, 105),
    )
    query_axis.title.set_fontsize(9)
    query_axis.legend(fontsize=7)
    query_axis.grid(True, which="both", alpha=0.3)
    memory_axis.plot(
        [s["order_lines"] for s in scales],
        [s["peak_rss_bytes"] / GIB for s in scales],
        marker="o",
        label="peak RSS (Python + JVM)",
    )
    memory_axis.axhline(8, color="red", linestyle="--", label="8 GiB target")
    memory_axis.set(
        xscale="log", title="peak memory", xlabel="order lines", ylabel="GiB", ylim=(0, 9)
    )
    memory_axis.title.set_fontsize(9)
    memory_axis.legend(fontsize=7)
    memory_axis.grid(True, which="both", alpha=0.3)
    figure.suptitle(f"lakehouse benchmark, {results['finished_at']}", fontsize=11)
    figure.tight_layout()
    figure.savefig(path, dpi=100)
    plt.close(figure)


def write_outputs(results: dict, out_dir: Path = OUT_DIR) -> None:
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "results.json").write_text(json.dumps(results, indent=2, sort_keys=True) + "\n")
    (out_dir / "results.md").write_text(render_markdown(results) + "\n")
    plot(results, out_dir / "results.png")


def main() -> int:
    """Re-render results.md and results.png from results.json."""
    results = json.loads((OUT_DIR / "results.json").read_text())
    write_outputs(results)
    print(f"docs/bench/results.md and results.png rendered from {OUT_DIR / 'results.json'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
