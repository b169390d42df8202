"""The pipeline's tables, as the log says and as another engine reads them.

Read from the session's shop (batch 0, then change batches merged in: MERGE commits and
earlier versions to travel to), its commit audit rebuilt last. Every Delta table of the
schema is checked, whatever models exist. What two independent readers read, delta-rs
(`deltalake`) and DuckDB's delta extension (delta-kernel-rs), is written to target/interop.json
and compared with the committed docs/interop.json; `make interop` records it there and renders
docs/interop.md from it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path
from zoneinfo import ZoneInfo

import duckdb
import pyarrow as pa
import pytest
from deltalake import DeltaTable
from pyspark.sql.types import VariantVal

from lakehouse.delta.audit import delta_tables
from lakehouse.delta.conformance import check_conformance, claimed_features
from lakehouse.delta.log import DeltaLog, Snapshot
from lakehouse.reports.interop import CHECKS, DUCKDB_CHECKS, RECORDED, RESULTS
from python_tests.integration.conftest import SHOP_BATCHES
from python_tests.readers import delta_rs_sql_read, duckdb_with_delta

# The refusals each reader is known for, by the table feature that causes them and the words
# of its message: any other exception of a reader, or one of these on a table without the
# feature, fails the test.
EXPECTED_REFUSALS = {
    ("delta-rs", "deletionVectors"): "reader features: {'deletionVectors'} but these are not yet",
    ("duckdb", "variantType"): "Unsupported Arrow type VARIANT",
}


@pytest.fixture(scope="class")
def pipeline(shop):
    """The session's shop with its commit audit rebuilt last, so it covers every commit."""
    project = shop.project
    project.dbt("build", "--select", "tag:audit")
    claims = {
        r.node.alias: dict(r.node.config.get("tblproperties") or {})
        for r in shop.builds[0].result
        if r.node.resource_type in ("model", "seed", "snapshot")
    }
    tables = delta_tables(project.spark, project.schema)
    tables.pop("delta_commit_audit")
    return project, tables, claims


def _is_json(text: str) -> bool:
    try:
        json.loads(text)
    except ValueError:
        return False
    return True


def _normalise(value):
    """Spark returns naive local datetimes, Arrow aware UTC ones: compare both in UTC. A
    VARIANT is compared by its stored encoding (its value and metadata bytes): Spark gives a
    VariantVal, an Arrow reader of unshredded variant the struct<metadata, value> of the file."""
    if isinstance(value, VariantVal):
        return ("variant", bytes(value.metadata), bytes(value.value))
    if isinstance(value, dict) and value.keys() == {"metadata", "value"}:
        return ("variant", bytes(value["metadata"]), bytes(value["value"]))
    if isinstance(value, datetime):
        return value.astimezone(UTC).replace(tzinfo=None)
    if isinstance(value, float):
        return round(value, 9)
    return value


def _rows(records, columns) -> list[tuple]:
    rows = [tuple(_normalise(r[c]) for c in columns) for r in records]
    return sorted(rows, key=lambda row: tuple((v is None, str(v)) for v in row))


def _spark_rows(spark, sql: str, exclude=()) -> tuple[list[str], list[tuple]]:
    frame = spark.sql(sql)
    columns = [c for c in frame.columns if c not in exclude]
    return columns, _rows([r.asDict() for r in frame.collect()], columns)


def _compare(spark_columns, spark_rows, arrow_table: pa.Table) -> str:
    delta_rs_rows = _rows(arrow_table.to_pylist(), spark_columns)
    if delta_rs_rows == spark_rows:
        return "same"
    return f"different rows ({len(delta_rs_rows)} vs Spark's {len(spark_rows)})"


def _read(check) -> str:
    """Run one read of another engine; a feature it rejects is recorded, never skipped
    silently."""
    try:
        return check()
    except Exception as exc:  # each reader raises its own types (DeltaProtocolError, ...)
        return f"unsupported: {type(exc).__name__}: {str(exc).splitlines()[0][:160]}"


class TestPipelineTables:
    def test_the_schema_holds_the_pipeline_tables(self, pipeline):
        _, tables, claims = pipeline
        assert {"fct_orders", "int_orders_deduplicated", "snap_customers"} <= set(tables)
        enabled = {f for props in claims.values() for f in claimed_features(props)}
        assert {"changeDataFeed", "rowTracking", "deletionVectors"} <= enabled

    def test_inspector_active_files_equal_sparks(self, pipeline):
        project, tables, _ = pipeline
        for table, location in tables.items():
            snapshot = DeltaLog(location).snapshot()
            detail = project.detail(table)
            assert len(snapshot.files) == detail.numFiles, table
            read = project.rows(
                f"select distinct input_file_name() as f from {project.relation(table)}"
            )
            read_paths = {r.f.split(location.rstrip("/") + "/", 1)[-1] for r in read}
            assert read_paths <= {path for path, _ in snapshot.files}, table
            assert snapshot.num_records == project.count(table), table

    def test_every_model_conforms_to_its_claimed_features(self, pipeline):
        _, tables, claims = pipeline
        for table, location in tables.items():
            claimed = claims.get(table, {})
            assert check_conformance(DeltaLog(location), claimed) == [], table

    def test_local_order_times_are_timestamp_ntz_from_the_first_commit(self, pipeline):
        project, tables, _ = pipeline
        first = DeltaLog(tables["fct_orders"]).history()[0]
        for side in ("readerFeatures", "writerFeatures"):
            assert "timestampNtz" in first.protocol[side], first.protocol
        types = {r.col_name: r.data_type for r in project.rows(
            f"describe {project.relation('fct_orders')}")}  # fmt: skip
        assert types["ordered_at_local"] == "timestamp_ntz"
        rows = project.rows(
            "select o.ordered_at, o.ordered_at_local, k.time_zone "
            f"from {project.relation('fct_orders')} o "
            f"left join {project.relation('int_customers_deduplicated')} c using (customer_id) "
            f"left join {project.relation('country_codes')} k using (country_code)"
        )
        assert sum(r.time_zone is not None for r in rows) > len(rows) / 2
        for row in rows:
            # a naive datetime from Spark is this process's local time, as _normalise reads it
            expected = (
                None
                if row.time_zone is None or row.ordered_at is None
                else row.ordered_at.astimezone(ZoneInfo(row.time_zone)).replace(tzinfo=None)
            )
            assert row.ordered_at_local == expected, row

    def test_payment_responses_are_variant_from_the_first_commit(self, pipeline):
        """Silver stores the provider's JSON as a VARIANT (variantType in its first commit),
        holding what bronze received; the malformed response is quarantined, not NULLed."""
        project, tables, _ = pipeline
        first = DeltaLog(tables["int_payments_deduplicated"]).history()[0]
        for side in ("readerFeatures", "writerFeatures"):
            assert "variantType" in first.protocol[side], first.protocol
        silver = project.relation("int_payments_deduplicated")
        types = {r.col_name: r.data_type for r in project.rows(f"describe {silver}")}
        assert types["provider_response"] == "variant"
        stored = {
            r.payment_id: json.loads(r.response)
            for r in project.rows(f"select payment_id, to_json(provider_response) as response "
                                  f"from {silver} where not is_deleted")
        }  # fmt: skip
        received = {
            r.payment_id: r.provider_response
            for r in project.rows(f"select * from `{project.bronze_schema}`.payments")
        }
        malformed = {k for k, text in received.items() if not _is_json(text)}
        assert len(malformed) == len(SHOP_BATCHES) - 1, "a cut-off response per change batch"
        assert stored == {k: json.loads(text) for k, text in received.items() if k not in malformed}
        reasons = project.rows(
            f"select cast(record_id as bigint) as record_id, rejection_reason from "
            f"{project.relation('int_shop_rows_quarantined')} where source_table = 'payments'"
        )
        assert {r.record_id: r.rejection_reason for r in reasons} == dict.fromkeys(
            malformed, "provider_response is missing or not JSON"
        )

    def test_commit_audit_covers_every_commit_and_adds_up(self, pipeline):
        project, tables, _ = pipeline
        audit = project.rows(
            "select table_name, count(*) as commits, max(version) as latest, "
            "sum(records_added - records_removed) as net_records "
            f"from {project.relation('delta_commit_audit')} group by table_name"
        )
        by_table = {r.table_name: r for r in audit}
        assert set(by_table) == set(tables)
        for table in tables:
            history = project.history(table)
            assert by_table[table].commits == len(history), table
            assert by_table[table].latest == max(h.version for h in history), table
            assert by_table[table].net_records == project.count(table), table

    def test_delta_rs_and_duckdb_read_every_table_like_spark(self, pipeline):
        project, tables, _ = pipeline
        duck = duckdb_with_delta()
        results = {}
        for table, location in sorted(tables.items()):
            spark = SparkReads.of(project, location)
            results[table] = _delta_rs_entry(project, table, spark) | _duckdb_entry(duck, spark)
        recorded = {
            "engines": {
                "reference": f"Spark {metadata.version('pyspark')} + Delta Lake "
                f"{metadata.version('delta-spark')}",
                "reader": f"delta-rs (deltalake {metadata.version('deltalake')})",
                "second_reader": f"DuckDB {duckdb.__version__} with its delta extension "
                f"{metadata.version('duckdb-extension-delta')} (delta-kernel-rs)",
            },
            "tables": results,
        }
        wrong = {
            f"{table}.{check}": outcome
            for table, entry in results.items()
            for check, outcome in entry.items()
            if check != "features" and outcome.startswith("different")
        }
        assert wrong == {}, wrong
        assert all(entry["latest_sql"] == "same" for entry in results.values()), results
        # A read a reader refuses is recorded, and must be a known refusal of a feature the
        # table has.
        for table, entry in results.items():
            for check in CHECKS + DUCKDB_CHECKS:
                reader = "duckdb" if check in DUCKDB_CHECKS else "delta-rs"
                if entry[check].startswith("unsupported"):
                    assert any(
                        words in entry[check]
                        for (refuser, feature), words in EXPECTED_REFUSALS.items()
                        if refuser == reader and feature in entry["features"]
                    ), f"{table}: {reader} refused {check} unexpectedly: {entry[check]}"
                else:
                    assert entry[check] in ("same", "not applicable"), (table, entry)
        # recorded only when every read is right, so `make interop` never records a failure
        RECORDED.parent.mkdir(exist_ok=True)
        RECORDED.write_text(json.dumps(recorded, indent=2, sort_keys=True) + "\n")
        committed = json.loads(RESULTS.read_text())
        assert recorded == committed, f"{RECORDED} differs from {RESULTS}: run `make interop`"


@dataclass(frozen=True)
class SparkReads:
    """What Spark reads of one table, read once and compared with every other reader: the
    latest version and, when there is one, the version before (columns, rows)."""

    log: DeltaLog
    snapshot: Snapshot
    latest: tuple[list[str], list[tuple]]
    earlier: tuple[int, list[str], list[tuple]] | None

    @classmethod
    def of(cls, project, location: str) -> SparkReads:
        log = DeltaLog(location)
        snapshot = log.snapshot()
        latest = _spark_rows(project.spark, f"select * from delta.`{location}`")
        earlier = None
        if snapshot.version >= 1:
            version = snapshot.version - 1
            earlier = (
                version,
                *_spark_rows(
                    project.spark, f"select * from delta.`{location}` version as of {version}"
                ),
            )
        return cls(log, snapshot, latest, earlier)


def _delta_rs_entry(project, table: str, spark: SparkReads) -> dict:
    """delta-rs against Spark on one table: latest version, one version back, change feed."""
    log, snapshot, path = spark.log, spark.snapshot, spark.log.root
    columns, latest_rows = spark.latest
    entry = {
        "features": sorted(snapshot.reader_features | snapshot.writer_features),
        "latest": _read(
            lambda: _compare(columns, latest_rows, DeltaTable(path).to_pyarrow_table())
        ),
        "latest_sql": _read(
            lambda: _compare(columns, latest_rows, delta_rs_sql_read(DeltaTable(path)))
        ),
        "time_travel": "not applicable",
        "change_data_feed": "not applicable",
    }
    if spark.earlier:
        earlier, old_columns, earlier_rows = spark.earlier
        entry["time_travel"] = _read(
            lambda: _compare(
                old_columns, earlier_rows, delta_rs_sql_read(DeltaTable(path, version=earlier))
            )
        )
    if snapshot.configuration.get("delta.enableChangeDataFeed") == "true":
        first = min(log.commit_mtimes)
        cdf_columns, changes = _spark_rows(
            project.spark,
            f"select * from table_changes('{project.schema}.{table}', {first})",
            exclude=("_commit_timestamp",),
        )
        entry["change_data_feed"] = _read(
            lambda: _compare(
                cdf_columns, changes, pa.table(DeltaTable(path).load_cdf(starting_version=first))
            )
        )
    return entry


def _duckdb_read(duck, uri: str, version: int | None = None) -> pa.Table:
    at = "" if version is None else f", version => {version}"
    return pa.table(duck.sql(f"from delta_scan('{uri}'{at})").arrow())


def _duckdb_entry(duck, spark: SparkReads) -> dict:
    """DuckDB's `delta_scan` against Spark on one table: latest version, one version back.
    (The extension has no change-data-feed reader.)"""
    uri = Path(spark.log.root).resolve().as_uri()
    columns, latest_rows = spark.latest
    entry = {
        "duckdb_latest": _read(lambda: _compare(columns, latest_rows, _duckdb_read(duck, uri))),
        "duckdb_time_travel": "not applicable",
    }
    if spark.earlier:
        earlier, old_columns, earlier_rows = spark.earlier
        entry["duckdb_time_travel"] = _read(
            lambda: _compare(old_columns, earlier_rows, _duckdb_read(duck, uri, earlier))
        )
    return entry
