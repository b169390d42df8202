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
    distributions: tuple[str, ...] = ()  # change distributions it is measured with, if any


# The change distributions of lakehouse.bench.data, headline first.
DISTRIBUTIONS = ("localised", "uniform")
DISTRIBUTION_LABELS = {
    "localised": "key-localised changes",
    "uniform": "uniform changes (worst case)",
}

SCENARIOS = [
    Scenario(
        "incremental_vs_full",
        "1. silver MERGE model `int_order_lines_deduplicated`",
        "incremental run, 1% change batch",
        "full refresh",
        DISTRIBUTIONS,
    ),
    Scenario(
        "cdf_vs_recompute",
        "2. gold aggregate `fct_daily_revenue`",
        "maintained from the change data feed, 1% change",
        "full recompute",
        DISTRIBUTIONS,
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


def scenario_entry(scale: dict, key: str, distribution: str | None = None) -> dict | None:
    """A timed scenario's figures at one scale, for one change distribution. Results written
    before there were distributions have `incremental_vs_full` and `cdf_vs_recompute` alone:
    those batches were uniform."""
    scenarios = scale.get("scenarios", {})
    if distribution is None:
        return scenarios.get(key)
    entry = scenarios.get(f"{key}.{distribution}")
    if entry is None and distribution == "uniform":
        entry = scenarios.get(key)
    return entry


@dataclass(frozen=True)
class Target:
    key: str
    text: str
    limit: float


TARGETS = [
    Target(
        "incremental_ratio.localised",
        "key-localised 1% change: silver MERGE model ≤ 10% of its full refresh",
        0.10,
    ),
    Target(
        "cdf_ratio.localised",
        "key-localised 1% change: CDF aggregate ≤ 15% of its full recompute",
        0.15,
    ),
    Target(
        "incremental_ratio.uniform",
        "uniform 1% change (worst case): silver MERGE model ≤ 35% of its full refresh",
        0.35,
    ),
    Target(
        "cdf_ratio.uniform",
        "uniform 1% change (worst case): CDF aggregate ≤ 25% of its full recompute",
        0.25,
    ),
    Target(
        "no_change_seconds",
        "no upstream change: ≤ 1.5 s per incremental model (the slowest model's own time)",
        1.5,
    ),
    Target(
        "no_change_statements",
        "no upstream change: ≤ 6 Spark statements per incremental model (the most of any model)",
        6,
    ),
    Target(
        "files_read_fraction",
        "selective query after OPTIMIZE reads ≤ 5% of the files",
        0.05,
    ),
    Target(
        "dbt_overhead",
        "dbt overhead ≤ 1.2× the same SQL run directly",
        1.2,
    ),
    Target(
        "peak_memory",
        "peak memory of the run (Python + JVM) under 8 GiB",
        8 * GIB,
    ),
]


def target_values(scale: dict, peak_rss_bytes: float) -> dict[str, float | None]:
    """The figure each target is judged on, at one scale (medians of the paired ratios; for
    the no-change runs, the worst model)."""
    scenarios = scale.get("scenarios", {})

    def ratio(key: str, distribution: str | None = None) -> float | None:
        entry = scenario_entry(scale, key, distribution)
        return entry["ratio"]["median"] if entry else None

    query = scenarios.get("clustered_query")
    files = None
    if query:
        after = query["after"]
        files = after["files_read"] / after["files_total"] if after["files_total"] else None
    no_change = scenarios.get("no_change") or {}
    values: dict[str, float | None] = {}
    for distribution in DISTRIBUTIONS:
        values[f"incremental_ratio.{distribution}"] = ratio("incremental_vs_full", distribution)
        values[f"cdf_ratio.{distribution}"] = ratio("cdf_vs_recompute", distribution)
    values.update(
        {
            "no_change_seconds": max((r["node_seconds"] for r in no_change.values()), default=None),
            "no_change_statements": max(
                (r["statements"] for r in no_change.values()), default=None
            ),
            "files_read_fraction": files,
            "dbt_overhead": ratio("dbt_overhead"),
            "peak_memory": peak_rss_bytes,
        }
    )
    return values


def _worst_no_change_model(scale: dict, field: str) -> str | None:
    runs = scale.get("scenarios", {}).get("no_change") or {}
    return max(runs, key=lambda model: runs[model][field]) if runs else None


def _format_value(key: str, value: float) -> str:
    if key == "peak_memory":
        return f"{value / GIB:.2f} GiB"
    if key == "dbt_overhead":
        return f"{value:.2f}×"
    if key == "no_change_seconds":
        return f"{value:.2f} s"
    if key == "no_change_statements":
        return f"{value:.0f} statements"
    return f"{value:.1%}"


def evaluate_targets(results: dict) -> list[dict]:
    """Each target at the largest scale that measured it: value, met, and by how much it is
    missed (a target no scale measured stays in the list as "not measured")."""
    scales = sorted(results["scales"], key=lambda s: s["order_lines"])
    verdicts = []
    for target in TARGETS:
        value, judged_at = None, None
        for scale in scales:
            measured = target_values(scale, results["peak_rss_bytes"])[target.key]
            if measured is not None:
                value, judged_at = measured, scale
        entry = {
            "key": target.key,
            "target": target.text,
            "value": value,
            "limit": target.limit,
            "order_lines": judged_at["order_lines"] if judged_at else None,
        }
        if value is None:
            entry.update(met=None, verdict="not measured")
            verdicts.append(entry)
            continue
        shown = _format_value(target.key, value)
        if target.key.startswith("no_change"):
            field = "node_seconds" if target.key == "no_change_seconds" else "statements"
            shown += f" (`{_worst_no_change_model(judged_at, field)}`)"
        if value <= target.limit:
            entry.update(met=True, verdict=f"met: {shown}")
        else:
            if target.key in ("dbt_overhead", "peak_memory", "no_change_seconds"):
                by = f"{value / target.limit:.2f}× the limit"
            elif target.key == "no_change_statements":
                by = f"{value - target.limit:.0f} statements"
            else:
                by = f"{(value - target.limit) * 100:.1f} percentage points"
            entry.update(met=False, verdict=f"missed by {by}: {shown}")
        verdicts.append(entry)
    return verdicts


def _seconds(summary: dict) -> str:
    return f"{summary['median']:.2f} s ({summary['min']:.2f}–{summary['max']:.2f})"


def _ratio(summary: dict) -> str:
    return f"{summary['median']:.3f} ({summary['min']:.3f}–{summary['max']:.3f})"


def _timed_scenarios():
    """Each timed scenario once per change distribution, with its title in the tables."""
    for scenario in SCENARIOS:
        for distribution in scenario.distributions or (None,):
            label = f", {DISTRIBUTION_LABELS[distribution]}" if distribution else ""
            yield (
                scenario,
                distribution,
                f"{scenario.title}: {scenario.measured} vs {scenario.baseline}{label}",
            )


def render_table(results: dict) -> str:
    """The Markdown table of every timed scenario at every scale (scenarios 1 and 2 once per
    change distribution), then the selective query's files."""
    scales = sorted(results["scales"], key=lambda s: s["order_lines"])
    lines = [
        "| scenario | order lines | measured: median s (min–max) | baseline: median s "
        "(min–max) | ratio: median (min–max) | n |",
        "|---|---:|---|---|---|---:|",
    ]
    for scenario, distribution, title in _timed_scenarios():
        for scale in scales:
            entry = scenario_entry(scale, scenario.key, distribution)
            if not entry:
                continue
            lines.append(
                f"| {title} | {scale['order_lines']:,} | {_seconds(entry['measured'])} "
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


def _versions(results: dict) -> str:
    versions = results["machine"]["versions"]
    return ", ".join(f"{name} {versions[name]}" for name in ("pyspark", "delta-spark", "dbt-core"))


def render_stack_comparison(old: dict, new: dict) -> str:
    """Two runs of the benchmark on two stacks, side by side: per timed scenario, change
    distribution and scale both hold, each side's median time on both stacks and new/old, so
    that a regression of the model (measured) and of the engine's floor (baseline) shows."""
    old_scales = {s["order_lines"]: s for s in old["scales"]}
    new_scales = {s["order_lines"]: s for s in new["scales"]}
    lines = [
        f"old: {_versions(old)} ({old['finished_at']}); new: {_versions(new)} "
        f"({new['finished_at']}).",
        "",
        "| scenario | order lines | measured: old s | new s | new/old | baseline: old s | new s "
        "| new/old |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for scenario, distribution, title in _timed_scenarios():
        for order_lines in sorted(old_scales.keys() & new_scales.keys()):
            before = scenario_entry(old_scales[order_lines], scenario.key, distribution)
            after = scenario_entry(new_scales[order_lines], scenario.key, distribution)
            if not before or not after:
                continue
            cells = []
            for side in ("measured", "baseline"):
                was, now = before[side]["median"], after[side]["median"]
                cells.append(f"{was:.2f} | {now:.2f} | {now / was:.2f}")
            lines.append(f"| {title} | {order_lines:,} | {' | '.join(cells)} |")
    return "\n".join(lines)


def render_no_change(results: dict) -> str:
    """Per scale and incremental model: the run with no upstream change (empty when the
    results have none)."""
    scales = sorted(results["scales"], key=lambda s: s["order_lines"])
    rows = []
    for scale in scales:
        for model, run in (scale.get("scenarios", {}).get("no_change") or {}).items():
            kinds = ", ".join(f"{kind} {n}" for kind, n in sorted(run["statement_kinds"].items()))
            rows.append(
                f"| `{model}` | {scale['order_lines']:,} | {run['statements']} | {kinds} "
                f"| {run['node_seconds']:.2f} s | {run['wall_seconds']:.2f} s |"
            )
    if not rows:
        return ""
    return "\n".join(
        [
            "| incremental model | order lines | Spark statements | by kind | model's time "
            "| `dbt run` wall time |",
            "|---|---:|---:|---|---:|---:|",
            *rows,
        ]
    )


def render_bronze_age(results: dict) -> str:
    """Per scale and bronze age: the silver model's incremental run against the floor of its
    read, a scan of bronze and the full refresh (empty when the results have none)."""
    rows = []
    for scale in sorted(results["scales"], key=lambda s: s["order_lines"]):
        for point in scale.get("scenarios", {}).get("bronze_age") or []:
            rows.append(
                f"| {scale['order_lines']:,} | {point['age']}× ({point['bronze_rows']:,}) "
                f"| {point['incremental_seconds']:.1f} s "
                f"({point['incremental_node_seconds']:.1f} s) "
                f"| {point['touched_read_seconds']:.1f} s "
                f"| {point['touched_read_files']}/{point['bronze_files']} "
                f"| {point['bronze_scan_seconds']:.1f} s | {point['full_refresh_seconds']:.1f} s "
                f"| {point['incremental_seconds'] / point['full_refresh_seconds']:.0%} |"
            )
    if not rows:
        return ""
    return "\n".join(
        [
            "| order lines | bronze (rows) | incremental run (model) | floor: touched-row read "
            "| bronze files read | bronze scan | full refresh | incremental / full |",
            "|---:|---|---:|---:|---:|---:|---:|---:|",
            *rows,
        ]
    )


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


def render_distributions(config: dict) -> str:
    """Where the change batches' updates and deletes fall, and which scales ran what."""
    localised = (config.get("distributions") or {}).get("localised")
    if localised is None:
        return "Change batches: updates and deletes picked uniformly from the whole table."
    text = (
        f"Change batches: key-localised (the headline) put {localised['hot_share']:.0%} of the "
        f"updates, deletes and order status updates on the most recent "
        f"{localised['hot_orders']:.0%} of the orders (by key, hence by order date) and the rest "
        "anywhere; uniform (the worst case) pick them from the whole table; new orders come at "
        "the end of the key range in both."
    )
    if config.get("large_scales"):
        text += (
            " At "
            + ", ".join(f"{n:,}" for n in config["large_scales"])
            + (" order lines only scenarios 1 and 2 and the no-change runs are measured.")
        )
    return text


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
        render_distributions(config),
        "",
        render_table(results),
        "",
    ]
    no_change = render_no_change(results)
    if no_change:
        lines += [
            "A `dbt run` of each incremental model alone with no upstream change: the Spark "
            "statements the model sends (`SparkSession.sql` calls: the adapter's SQL and the "
            "Python models' own), dbt's time for the model, and the invocation's wall time "
            "(dbt start-up, parsing and the relation cache included):",
            "",
            no_change,
            "",
        ]
    bronze_age = render_bronze_age(results)
    if bronze_age:
        lines += [
            "Scenario 1 as bronze ages: the silver model recomputes each key a bronze commit "
            "touches from bronze's current rows of that key, so its run reads bronze. Bronze "
            "grown to 2× and 4× its initial load (the source re-sending it), then a 1% uniform "
            "change: the incremental `dbt run` (dbt's time for the model), the engine's floor "
            "for its read (the touched keys semi-joined to bronze on `spark.sql`, alone) and the "
            "bronze files that read takes, one scan of bronze, the `--full-refresh`:",
            "",
            bronze_age,
            "",
        ]
    lines += [
        "Targets, each judged at the largest scale that measured it:",
        "",
        "| target | order lines | result |",
        "|---|---:|---|",
    ]
    for verdict in evaluate_targets(results):
        mark = {True: "✅", False: "❌", None: "–"}[verdict["met"]]
        at = f"{verdict['order_lines']:,}" if verdict["order_lines"] else "–"
        lines.append(f"| {verdict['target']} | {at} | {mark} {verdict['verdict']} |")
    return "\n".join(lines)


def plot(results: dict, path: Path) -> None:
    """results.png: per scenario, time (median, min–max bars) against table size."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    scales = sorted(results["scales"], key=lambda s: s["order_lines"])
    figure, axes = plt.subplots(2, 3, figsize=(15, 8.5))
    for axis, scenario in zip(axes.flat, SCENARIOS, strict=False):
        curves = [
            (distribution, side, label + (f", {distribution}" if distribution else ""))
            for distribution in scenario.distributions or (None,)
            for side, label in (("measured", scenario.measured), ("baseline", scenario.baseline))
        ]
        for distribution, side, label in curves:
            points = [
                (s["order_lines"], scenario_entry(s, scenario.key, distribution)[side])
                for s in scales
                if scenario_entry(s, scenario.key, distribution)
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
    text = json.dumps(results, indent=2, sort_keys=True)
    (out_dir / "results.json").write_text(text + "\n")
    # rendered from what the JSON holds (its keys sorted), so re-rendering it gives the same page
    results = json.loads(text)
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
