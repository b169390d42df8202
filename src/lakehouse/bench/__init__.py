"""Benchmarks: what each run of the pipeline costs as the tables grow (`make bench`).

- `lakehouse.bench.data`: a Spark-native, deterministic bulk generator of the bronze tables
  (batch 0 and change batches of real updates, inserts and deletes on existing keys);
- `lakehouse.bench.run`: the scenarios, timed with the real dbt models in one JVM;
- `lakehouse.bench.report`: medians and spread, targets, the Markdown table, the plot and the
  README section (pure, unit-tested).
"""
