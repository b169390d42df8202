"""Benchmarks: what each run of the pipeline costs as the tables grow (`make bench`).

- `lakehouse.bench.data`: a Spark-native, deterministic bulk generator of the bronze tables
  (batch 0 and change batches of real updates, inserts and deletes on existing keys);
- `lakehouse.bench.run`: `make bench`'s entry point: every scenario at each scale, in one JVM,
  and the results written;
- `lakehouse.bench.scenarios`: the scenarios, timed with the real dbt models;
- `lakehouse.bench.project`: the project's dbt in-process, on one scale's schemas;
- `lakehouse.bench.measure`: memory, Delta's commit metrics, files read, the machine;
- `lakehouse.bench.statements`: the Spark statements each dbt node sends, by kind;
- `lakehouse.bench.report`: medians and spread, targets, the Markdown table, the plot and the
  README section (pure, unit-tested).
"""
