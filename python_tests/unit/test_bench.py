"""The benchmark's pure logic: statistics, targets, Markdown rendering, data plans."""

from __future__ import annotations

import json

import pytest

from lakehouse.bench import report
from lakehouse.bench.data import BulkShop


def _paired(measured, baseline):
    return {
        "measured": report.summarize(measured),
        "baseline": report.summarize(baseline),
        "ratio": report.summarize(report.paired_ratios(measured, baseline)),
    }


def _results(order_lines=(100_000, 5_000_000), incremental=(1.0, 1.2, 1.1), full=(10.0,) * 3):
    scales = []
    for n in order_lines:
        scales.append(
            {
                "order_lines": n,
                "peak_rss_bytes": 3 * report.GIB,
                "scenarios": {
                    "incremental_vs_full": _paired(list(incremental), list(full)),
                    "cdf_vs_recompute": _paired([3.0, 3.0, 3.0], [10.0, 10.0, 10.0]),
                    "deletion_vectors": _paired([1.0, 1.0], [4.0, 2.0]),
                    "dbt_overhead": _paired([12.0, 13.0, 14.0], [10.0, 10.0, 10.0]),
                    "clustered_query": {
                        "table": "fct_order_lines",
                        "column": "order_id",
                        "predicate": "order_id between 1 and 2",
                        "before": {"files_read": 4, "files_total": 4},
                        "after": {"files_read": 1, "files_total": 25},
                    },
                },
            }
        )
    return {
        "finished_at": "2026-11-22 10:00 UTC",
        "duration_s": 600.0,
        "machine": {
            "cpu_model": "Test CPU",
            "cores": 2,
            "memory_gib": 24.0,
            "os": "Linux",
            "load_average": "0.10 0.10 0.10",
            "versions": {"pyspark": "4.0.1"},
        },
        "config": {
            "spark_master": "local[2]",
            "driver_memory": "4g",
            "shuffle_partitions": 4,
            "change_fraction": 0.01,
            "update_fraction": 0.001,
            "memory_sample_s": 0.5,
        },
        "peak_rss_bytes": 3.5 * report.GIB,
        "scales": scales,
    }


def test_summarize_reports_median_range_and_relative_spread():
    summary = report.summarize([3.0, 1.0, 2.0, 10.0])
    assert summary == {"n": 4, "median": 2.5, "min": 1.0, "max": 10.0, "spread": 3.6}


def test_summarize_of_one_sample_has_no_spread():
    assert report.summarize([4.0]) == {"n": 1, "median": 4.0, "min": 4.0, "max": 4.0, "spread": 0}


def test_summarize_needs_samples():
    with pytest.raises(ValueError):
        report.summarize([])


def test_ratios_are_paired_per_repetition():
    assert report.paired_ratios([1.0, 3.0], [2.0, 4.0]) == [0.5, 0.75]
    with pytest.raises(ValueError):
        report.paired_ratios([1.0], [1.0, 2.0])


def test_targets_are_judged_at_the_largest_scale():
    verdicts = {v["key"]: v for v in report.evaluate_targets(_results())}
    assert verdicts["incremental_ratio"]["met"] is True
    assert verdicts["incremental_ratio"]["value"] == pytest.approx(0.11)
    assert verdicts["files_read_fraction"]["value"] == pytest.approx(0.04)
    assert verdicts["peak_memory"]["met"] is True


def test_a_missed_target_says_by_how_much():
    results = _results(incremental=(2.2, 2.0, 2.4))
    verdicts = {v["key"]: v for v in report.evaluate_targets(results)}
    incremental = verdicts["incremental_ratio"]
    assert incremental["met"] is False
    assert incremental["verdict"] == "missed by 7.0 percentage points: 22.0%"
    overhead = verdicts["dbt_overhead"]
    assert overhead["met"] is True  # 1.3x exactly: at the limit is met


def test_markdown_table_has_a_row_per_scenario_and_scale():
    table = report.render_table(_results())
    rows = [line for line in table.splitlines() if line.startswith("| ") and "---" not in line]
    assert len(rows) == 1 + 2 * 5  # header + 2 scales x (4 timed scenarios + the query)
    assert (
        "| 5,000,000 | 1.10 s (1.00–1.20) | 10.00 s (10.00–10.00) | 0.110 (0.100–0.120) | 3 |"
        in (table)
    )
    assert "| after: 1 / 25 | before: 4 / 4 | 4.0% vs 100.0% | 1 |" in table


def test_markdown_names_machine_and_targets():
    text = report.render_markdown(_results())
    assert "Test CPU, 2 cores, 24 GiB RAM" in text
    assert "Targets, judged at 5,000,000 order lines" in text
    assert text.count("✅") == 4 and text.count("❌") == 1  # the CDF ratio, 30%


def test_committed_report_matches_the_committed_results():
    results = json.loads((report.OUT_DIR / "results.json").read_text())
    committed = (report.OUT_DIR / "results.md").read_text()
    assert committed == report.render_markdown(results) + "\n", (
        "run python -m lakehouse.bench.report"
    )


def test_change_batches_touch_existing_keys_and_advance_the_key_ranges():
    shop = BulkShop(order_lines=300_000)
    assert (shop.orders, shop.customers, shop.products) == (100_000, 20_000, 2000)
    first = shop.plan_change(0.01)
    assert first.batch_id == 1
    assert first.lines_before == 300_000 and first.orders_before == 100_000
    # 1% of the lines change: 40% new lines, 40% updates, 20% deletes of existing lines.
    assert first.new_orders * 3 == 1200
    assert first.line_update_ppm == 4000 and first.line_delete_ppm == 2000
    shop.plans.append(first)
    second = shop.plan_change(0.01)
    assert second.batch_id == 2
    assert second.lines_before == first.bad_line_id == 300_000 + 1200 + 1
    assert second.orders_before == first.bad_order_id == 100_000 + 400 + 1
