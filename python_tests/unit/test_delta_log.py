"""The log inspector and the conformance checks on logs written by hand (no Spark)."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from lakehouse.delta.conformance import check_conformance, claimed_features
from lakehouse.delta.log import (
    DeltaLog,
    DeltaLogError,
    deletion_vector_relative_path,
    deletion_vector_unique_id,
)

SCHEMA = json.dumps(
    {"type": "struct", "fields": [{"name": "id", "type": "long", "nullable": True, "metadata": {}}]}
)
PROTOCOL = {
    "minReaderVersion": 3,
    "minWriterVersion": 7,
    "readerFeatures": ["deletionVectors"],
    "writerFeatures": ["deletionVectors", "rowTracking", "domainMetadata", "inCommitTimestamp"],
}
CONFIG = {
    "delta.enableDeletionVectors": "true",
    "delta.enableRowTracking": "true",
    "delta.enableInCommitTimestamps": "true",
    "delta.rowTracking.materializedRowIdColumnName": "_row_id",
    "delta.rowTracking.materializedRowCommitVersionColumnName": "_row_commit_version",
}
# The protocol's own example of an on-disk DV descriptor (PROTOCOL.md, "JSON Example 1").
DV = {
    "storageType": "u",
    "pathOrInlineDv": "ab^-aqEH.-t@S}K{vb[*k^",
    "offset": 4,
    "sizeInBytes": 40,
    "cardinality": 6,
}


def commit_info(ict: int, operation: str, **metrics: str) -> dict:
    return {
        "commitInfo": {
            "inCommitTimestamp": ict,
            "timestamp": ict,
            "operation": operation,
            "operationMetrics": metrics,
            "userMetadata": f"note {ict}",
        }
    }


def add(path: str, records: int, base_row_id: int, version: int, dv: dict | None = None) -> dict:
    body = {
        "path": path,
        "partitionValues": {},
        "size": 100,
        "modificationTime": 1,
        "dataChange": True,
        "stats": json.dumps({"numRecords": records}),
        "baseRowId": base_row_id,
        "defaultRowCommitVersion": version,
    }
    if dv:
        body["deletionVector"] = dv
    return {"add": body}


def remove(path: str) -> dict:
    return {"remove": {"path": path, "deletionTimestamp": 5, "dataChange": True}}


def high_water_mark(value: int) -> dict:
    configuration = json.dumps({"rowIdHighWaterMark": value})
    return {"domainMetadata": {"domain": "delta.rowTracking", "configuration": configuration}}


def table_commits() -> list[list[dict]]:
    return [
        [
            commit_info(1000, "CREATE TABLE"),
            {"protocol": PROTOCOL},
            {
                "metaData": {
                    "id": "t",
                    "format": {"provider": "parquet", "options": {}},
                    "schemaString": SCHEMA,
                    "partitionColumns": [],
                    "configuration": CONFIG,
                }
            },
        ],
        [
            commit_info(2000, "WRITE"),
            add("a.parquet", 10, 0, 1),
            add("b.parquet", 5, 10, 1),
            high_water_mark(14),
            {"txn": {"appId": "loader", "version": 7}},
        ],
        [
            commit_info(3000, "DELETE", numDeletionVectorsAdded="1"),
            remove("a.parquet"),
            add("a.parquet", 10, 0, 1, dv=DV),
        ],
        [
            commit_info(4000, "WRITE"),
            remove("b.parquet"),
            add("c.parquet", 3, 15, 3),
            high_water_mark(17),
            {"txn": {"appId": "loader", "version": 8}},
        ],
    ]


def write_log(root: Path, commits: list[list[dict]]) -> Path:
    log_dir = root / "_delta_log"
    log_dir.mkdir(parents=True)
    for version, actions in enumerate(commits):
        lines = "\n".join(json.dumps(a) for a in actions)
        (log_dir / f"{version:020d}.json").write_text(lines + "\n")
    (root / deletion_vector_relative_path(DV)).parent.mkdir(parents=True, exist_ok=True)
    (root / deletion_vector_relative_path(DV)).write_bytes(b"\0" * 64)
    return root


@pytest.fixture
def table(tmp_path) -> Path:
    return write_log(tmp_path / "table", table_commits())


class TestInspector:
    def test_snapshot_reconciles_files_tombstones_and_transactions(self, table):
        snapshot = DeltaLog(str(table)).snapshot()
        assert snapshot.version == 3
        assert sorted(snapshot.files) == [
            ("a.parquet", deletion_vector_unique_id(DV)),
            ("c.parquet", None),
        ]
        assert sorted(snapshot.tombstones) == [("a.parquet", None), ("b.parquet", None)]
        assert snapshot.transactions == {"loader": 8}
        assert snapshot.row_id_high_water_mark == 17
        assert snapshot.num_records == (10 - 6) + 3

    def test_time_travel_snapshot(self, table):
        snapshot = DeltaLog(f"file:{table}").snapshot(1)
        assert sorted(p for p, _ in snapshot.files) == ["a.parquet", "b.parquet"]
        assert snapshot.transactions == {"loader": 7}

    def test_history_reports_each_version(self, table):
        history = DeltaLog(str(table)).history()
        assert [r.operation for r in history] == ["CREATE TABLE", "WRITE", "DELETE", "WRITE"]
        assert [r.in_commit_timestamp for r in history] == [1000, 2000, 3000, 4000]
        assert [r.user_metadata for r in history][1] == "note 2000"
        delete = history[2]
        assert (delete.files_added, delete.files_removed) == (1, 1)
        assert (delete.records_added, delete.records_removed) == (4, 10)
        assert delete.added_files[0].deletion_vector == DV
        assert history[3].action_counts == {
            "commitInfo": 1,
            "remove": 1,
            "add": 1,
            "domainMetadata": 1,
            "txn": 1,
        }
        assert [r.row_id_high_water_mark for r in history] == [None, 14, 14, 17]
        assert history[0].protocol == PROTOCOL

    def test_deletion_vector_path_follows_the_protocol_example(self):
        assert deletion_vector_relative_path(DV) == (
            "ab/deletion_vector_d2c639aa-8816-431a-aaf6-d3fe2512ff61.bin"
        )
        assert deletion_vector_unique_id(DV) == "uab^-aqEH.-t@S}K{vb[*k^@4"

    def test_classic_parquet_checkpoint_is_read_with_maps(self, table):
        log_dir = table / "_delta_log"
        snapshot = DeltaLog(str(table)).snapshot(2)
        rows = [{"protocol": snapshot.protocol}, {"metaData": snapshot.metadata}]
        rows += [{"add": a} for a in snapshot.files.values()]
        rows += [{"txn": {"appId": app, "version": v}} for app, v in snapshot.transactions.items()]
        pq.write_table(_checkpoint_table(rows), log_dir / f"{2:020d}.checkpoint.parquet")
        (log_dir / f"{0:020d}.json").unlink()  # only the checkpoint can provide versions 0-2
        (log_dir / "_last_checkpoint").write_text(json.dumps({"version": 2, "size": 5}))
        log = DeltaLog(str(table))
        latest = log.snapshot()
        assert latest.checkpoint.kind == "classic"
        assert sorted(p for p, _ in latest.files) == ["a.parquet", "c.parquet"]
        assert latest.metadata["configuration"] == CONFIG
        assert log.last_checkpoint()["version"] == 2
        assert [r.version for r in log.history()] == [3]  # history resumes after it

    def test_uuid_named_v2_checkpoint_with_sidecar(self, table):
        log_dir = table / "_delta_log"
        (log_dir / "_sidecars").mkdir()
        snapshot = DeltaLog(str(table)).snapshot(3)
        sidecar = log_dir / "_sidecars" / "side-1.parquet"
        pq.write_table(_checkpoint_table([{"add": a} for a in snapshot.files.values()]), sidecar)
        checkpoint = [
            {"checkpointMetadata": {"version": 3}},
            {"protocol": snapshot.protocol},
            {"metaData": snapshot.metadata},
            {"sidecar": {"path": "side-1.parquet", "sizeInBytes": sidecar.stat().st_size}},
        ]
        name = f"{3:020d}.checkpoint.80a083e8-7026-4e79-81be-64bd76c43a11.json"
        (log_dir / name).write_text("\n".join(json.dumps(a) for a in checkpoint))
        latest = DeltaLog(str(table)).snapshot()
        assert latest.checkpoint.kind == "uuid"
        assert sorted(latest.files) == sorted(snapshot.files)

    def test_incomplete_multi_part_checkpoint_is_ignored(self, table):
        part = table / "_delta_log" / f"{2:020d}.checkpoint.0000000001.0000000002.parquet"
        pq.write_table(_checkpoint_table([{"txn": {"appId": "x", "version": 1}}]), part)
        snapshot = DeltaLog(str(table)).snapshot()
        assert snapshot.checkpoint is None
        assert "x" not in snapshot.transactions

    def test_not_a_delta_table(self, tmp_path):
        with pytest.raises(DeltaLogError, match="not a Delta table"):
            DeltaLog(str(tmp_path))


def _checkpoint_table(rows: list[dict]) -> pa.Table:
    """A checkpoint as Spark writes it: one struct column per action type, maps as maps."""
    string_map = pa.map_(pa.string(), pa.string())
    dv = pa.struct(
        [
            ("storageType", pa.string()),
            ("pathOrInlineDv", pa.string()),
            ("offset", pa.int32()),
            ("sizeInBytes", pa.int32()),
            ("cardinality", pa.int64()),
        ]
    )
    file_fields = [
        ("path", pa.string()),
        ("partitionValues", string_map),
        ("size", pa.int64()),
        ("modificationTime", pa.int64()),
        ("dataChange", pa.bool_()),
        ("stats", pa.string()),
        ("deletionVector", dv),
        ("baseRowId", pa.int64()),
        ("defaultRowCommitVersion", pa.int64()),
    ]
    schema = pa.schema(
        [
            ("add", pa.struct(file_fields)),
            ("txn", pa.struct([("appId", pa.string()), ("version", pa.int64())])),
            (
                "protocol",
                pa.struct(
                    [
                        ("minReaderVersion", pa.int32()),
                        ("minWriterVersion", pa.int32()),
                        ("readerFeatures", pa.list_(pa.string())),
                        ("writerFeatures", pa.list_(pa.string())),
                    ]
                ),
            ),
            (
                "metaData",
                pa.struct(
                    [
                        ("id", pa.string()),
                        ("schemaString", pa.string()),
                        ("partitionColumns", pa.list_(pa.string())),
                        ("configuration", string_map),
                    ]
                ),
            ),
        ]
    )

    def as_arrow(row: dict) -> dict:
        out = {name: None for name in schema.names}
        for kind, body in row.items():
            body = dict(body)
            for key in ("partitionValues", "configuration"):
                if key in body:
                    body[key] = list(body[key].items())
            out[kind] = body
        return out

    return pa.Table.from_pylist([as_arrow(r) for r in rows], schema=schema)


class TestConformance:
    def test_a_conforming_log_has_no_violation(self, table):
        assert claimed_features(CONFIG) == ["rowTracking", "deletionVectors", "inCommitTimestamp"]
        assert check_conformance(DeltaLog(str(table)), CONFIG) == []

    def test_missing_base_row_id_names_the_version_and_the_add(self, tmp_path):
        commits = table_commits()
        del commits[3][2]["add"]["baseRowId"]
        [violation] = check_conformance(DeltaLog(str(write_log(tmp_path / "t", commits))), CONFIG)
        assert (violation.feature, violation.version, violation.action) == (
            "rowTracking",
            3,
            "add c.parquet",
        )

    def test_in_commit_timestamp_must_be_first_and_increasing(self, tmp_path):
        commits = table_commits()
        commits[2].append(commits[2].pop(0))  # commitInfo no longer first
        commits[3][0]["commitInfo"]["inCommitTimestamp"] = 1500  # goes back in time
        log = DeltaLog(str(write_log(tmp_path / "t", commits)))
        found = {(v.feature, v.version, v.action) for v in check_conformance(log, CONFIG)}
        assert found == {
            ("inCommitTimestamp", 2, "commitInfo"),
            ("inCommitTimestamp", 3, "commitInfo"),
        }

    def test_claim_without_protocol_feature_names_the_protocol_action(self, tmp_path):
        commits = table_commits()
        commits[0][1]["protocol"] = {**PROTOCOL, "readerFeatures": [], "writerFeatures": []}
        log = DeltaLog(str(write_log(tmp_path / "t", commits)))
        found = {(v.feature, v.version, v.action) for v in check_conformance(log, CONFIG)}
        assert ("deletionVectors", 0, "protocol") in found
        assert ("deletionVectors", 2, "add a.parquet") in found  # a DV the protocol forbids
        assert ("domainMetadata", 1, "domainMetadata delta.rowTracking") in found

    def test_reader_features_require_reader_version_3(self, tmp_path):
        commits = table_commits()
        commits[0][1]["protocol"] = {**PROTOCOL, "minReaderVersion": 1}
        log = DeltaLog(str(write_log(tmp_path / "t", commits)))
        messages = [str(v) for v in check_conformance(log, CONFIG) if v.action == "protocol"]
        assert messages == [
            "[protocol] version 0, protocol: readerFeatures must exist iff minReaderVersion is 3"
        ]

    def test_a_type_column_needs_its_reader_and_writer_feature(self, tmp_path):
        commits = table_commits()
        fields = [
            {"name": "local_time", "type": "timestamp_ntz", "nullable": True, "metadata": {}},
            {
                "name": "payloads",
                "type": {"type": "array", "elementType": "variant", "containsNull": True},
                "nullable": True,
                "metadata": {},
            },
        ]
        commits[0][2]["metaData"]["schemaString"] = json.dumps({"type": "struct", "fields": fields})
        log = DeltaLog(str(write_log(tmp_path / "t", commits)))
        found = {(v.feature, v.version, v.action) for v in check_conformance(log, CONFIG)}
        assert found == {("timestampNtz", 0, "metaData"), ("variantType", 0, "metaData")}
        commits[0][1]["protocol"] = {
            **PROTOCOL,
            "readerFeatures": [*PROTOCOL["readerFeatures"], "timestampNtz", "variantType"],
            "writerFeatures": [*PROTOCOL["writerFeatures"], "timestampNtz", "variantType"],
        }
        log = DeltaLog(str(write_log(tmp_path / "u", commits)))
        assert check_conformance(log, CONFIG) == []


class TestIcebergCompatV2:
    """PROTOCOL.md's writer requirements of icebergCompatV2, on a log written by hand."""

    CLAIM = {"delta.enableIcebergCompatV2": "true"}

    def commits(self, configuration: dict, fields: list[dict], stats: bool = True) -> list:
        protocol = {
            "minReaderVersion": 3,
            "minWriterVersion": 7,
            "readerFeatures": ["columnMapping"],
            "writerFeatures": ["columnMapping", "icebergCompatV2"],
        }
        metadata = {
            "id": "t",
            "format": {"provider": "parquet", "options": {}},
            "schemaString": json.dumps({"type": "struct", "fields": fields}),
            "partitionColumns": [],
            "configuration": configuration,
        }
        data = add("a.parquet", 3, 0, 1)
        if not stats:
            del data["add"]["stats"]
        return [
            [commit_info(1000, "CREATE TABLE"), {"protocol": protocol}, {"metaData": metadata}],
            [commit_info(2000, "WRITE"), data],
        ]

    def violations(self, tmp_path, name: str, **kwargs) -> set[tuple]:
        log = DeltaLog(str(write_log(tmp_path / name, self.commits(**kwargs))))
        return {
            (v.feature, v.version, v.action, v.message) for v in check_conformance(log, self.CLAIM)
        }

    def test_requirements_met_and_each_one_broken(self, tmp_path):
        on = {"delta.columnMapping.mode": "name", "delta.enableIcebergCompatV2": "true"}
        ids = {"parquet.field.nested.ids": {"tags.element": 3}}
        good = [
            {"name": "id", "type": "long", "nullable": True, "metadata": {}},
            {"name": "price", "type": "decimal(10,2)", "nullable": True, "metadata": {}},
            {
                "name": "tags",
                "type": {"type": "array", "elementType": "string", "containsNull": True},
                "nullable": True,
                "metadata": ids,
            },
        ]
        assert self.violations(tmp_path, "good", configuration=on, fields=good) == set()

        bad = [
            {"name": "payload", "type": "variant", "nullable": True, "metadata": {}},
            {**good[2], "metadata": {}},
        ]
        found = self.violations(
            tmp_path,
            "bad",
            configuration={
                **on,
                "delta.columnMapping.mode": "none",
                "delta.enableDeletionVectors": "true",
            },
            fields=bad,
            stats=False,
        )
        assert found == {
            ("icebergCompatV2", 0, "metaData", "column mapping is off"),
            ("icebergCompatV2", 0, "metaData", "delta.enableDeletionVectors is true"),
            ("icebergCompatV2", 1, "add a.parquet", "no numRecords"),
            ("icebergCompatV2", 0, "metaData", "column payload holds variant"),
            ("icebergCompatV2", 0, "metaData", "column tags has no nested field ids"),
            (
                "variantType",
                0,
                "metaData",
                "the schema has a variant column but the protocol does not list variantType as "
                "a reader and writer feature",
            ),
        }
