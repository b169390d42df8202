"""Does a table's log carry exactly the Delta features it claims? (PROTOCOL.md, delta v4.0.1)

`check_conformance(log, claimed)` takes the claimed table properties (a model's
`tblproperties`, or `SHOW TBLPROPERTIES`) and returns every violation, each naming the feature,
the version and the action at fault. Protocol-level rules (feature lists, DV and domain metadata
use without support, cdc actions, duplicate paths) are checked for every table.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass

import pyarrow.parquet as pq

from lakehouse.delta.log import (
    ROW_TRACKING_DOMAIN,
    DeltaLog,
    Snapshot,
    VersionReport,
    deletion_vector_relative_path,
    num_records,
    row_id_high_water_mark,
)

# feature name in the protocol -> (table property, values that enable it)
FEATURE_PROPERTIES: dict[str, tuple[str, tuple[str, ...]]] = {
    "changeDataFeed": ("delta.enableChangeDataFeed", ("true",)),
    "rowTracking": ("delta.enableRowTracking", ("true",)),
    "deletionVectors": ("delta.enableDeletionVectors", ("true",)),
    "inCommitTimestamp": ("delta.enableInCommitTimestamps", ("true",)),
    "columnMapping": ("delta.columnMapping.mode", ("name", "id")),
    "v2Checkpoint": ("delta.checkpointPolicy", ("v2",)),
    "icebergCompatV2": ("delta.enableIcebergCompatV2", ("true",)),
}
# What the protocol action must list for each feature (reader+writer or writer-only).
REQUIRED_PROTOCOL: dict[str, tuple[set[str], set[str]]] = {
    "changeDataFeed": (set(), {"changeDataFeed"}),
    "rowTracking": (set(), {"rowTracking", "domainMetadata"}),
    "deletionVectors": ({"deletionVectors"}, {"deletionVectors"}),
    "inCommitTimestamp": (set(), {"inCommitTimestamp"}),
    "columnMapping": ({"columnMapping"}, {"columnMapping"}),
    "v2Checkpoint": ({"v2Checkpoint"}, {"v2Checkpoint"}),
    "icebergCompatV2": ({"columnMapping"}, {"columnMapping", "icebergCompatV2"}),
}
# commitInfo metrics of the reference writer that say existing rows were rewritten.
_REWRITE_METRICS = (
    "numUpdatedRows",
    "numTargetRowsUpdated",
    "numCopiedRows",
    "numTargetRowsCopied",
)
_DV_ADDED_METRICS = ("numDeletionVectorsAdded", "numTargetDeletionVectorsAdded")
# The only types an icebergCompatV2 table may hold (PROTOCOL.md), nested ones aside.
_ICEBERG_V2_TYPES = {
    "byte",
    "short",
    "integer",
    "long",
    "float",
    "double",
    "string",
    "binary",
    "boolean",
    "timestamp",
    "timestamp_ntz",
    "date",
}
# Where the ids of nested elements, keys and values live: PROTOCOL.md names the first; Delta
# 4.0.1's writer keeps them in the log under the second (DeltaColumnMapping) and writes the
# first into the Parquet schema only.
_NESTED_IDS_KEYS = ("parquet.field.nested.ids", "delta.columnMapping.nested.ids")
# Data types a reader must know: a schema holding one needs the (reader+writer) feature.
TYPE_FEATURES = {"timestamp_ntz": "timestampNtz", "variant": "variantType"}


@dataclass(frozen=True)
class Violation:
    feature: str
    version: int | None
    action: str
    message: str

    def __str__(self) -> str:
        where = "log" if self.version is None else f"version {self.version}"
        return f"[{self.feature}] {where}, {self.action}: {self.message}"


def claimed_features(properties: Mapping[str, str]) -> list[str]:
    """The protocol features that a set of table properties enables."""
    return [
        feature
        for feature, (key, values) in FEATURE_PROPERTIES.items()
        if str(properties.get(key, "")).lower() in values
    ]


def _enabled(feature: str, configuration: Mapping[str, str]) -> bool:
    key, values = FEATURE_PROPERTIES[feature]
    return str(configuration.get(key, "")).lower() in values


def _metric(report: VersionReport, names: tuple[str, ...]) -> int:
    return sum(int(report.operation_metrics.get(name, 0) or 0) for name in names)


def _last_version_with(history: list[VersionReport], action: str) -> int | None:
    return next((r.version for r in reversed(history) if action in r.action_counts), None)


def check_conformance(log: DeltaLog, claimed: Mapping[str, str]) -> list[Violation]:
    """Every way the log contradicts the protocol or the claimed properties (empty: conforms)."""
    history = log.history()
    snapshot = log.snapshot()
    violations = list(_protocol_rules(log, history, snapshot))
    for feature in claimed_features(claimed):
        violations += _claim_rules(feature, claimed, history, snapshot)
        violations += _EVIDENCE[feature](log, history, snapshot)
    return violations


def _protocol_rules(
    log: DeltaLog, history: list[VersionReport], snapshot: Snapshot
) -> Iterator[Violation]:
    """Rules every table must follow, whatever it claims."""
    for report in history:
        counts = report.action_counts
        for single in ("metaData", "protocol"):
            if counts.get(single, 0) > 1:
                yield Violation("protocol", report.version, single, "more than one per version")
        for kind in ("checkpointMetadata", "sidecar"):
            if kind in counts:
                yield Violation("v2Checkpoint", report.version, kind, "not allowed in a commit")
        for action in report.actions:
            if "protocol" in action:
                yield from _protocol_action_rules(report.version, action["protocol"])
        reader = set((report.protocol or {}).get("readerFeatures") or ())
        writer = set((report.protocol or {}).get("writerFeatures") or ())
        for action in report.actions:
            kind, body = next(iter(action.items()))
            if kind == "metaData":
                schema = json.loads(body.get("schemaString") or "{}")
                for data_type in sorted(_primitive_types(schema) & set(TYPE_FEATURES)):
                    feature = TYPE_FEATURES[data_type]
                    if feature not in reader & writer:
                        yield Violation(
                            feature,
                            report.version,
                            "metaData",
                            f"the schema has a {data_type} column but the protocol does not "
                            f"list {feature} as a reader and writer feature",
                        )
            if kind in ("add", "remove") and body.get("deletionVector"):
                if "deletionVectors" not in reader & writer:
                    yield Violation(
                        "deletionVectors",
                        report.version,
                        f"{kind} {body['path']}",
                        "has a deletion vector but the protocol does not list deletionVectors",
                    )
            if kind == "domainMetadata" and "domainMetadata" not in writer:
                yield Violation(
                    "domainMetadata",
                    report.version,
                    f"domainMetadata {body['domain']}",
                    "the protocol does not list the domainMetadata writer feature",
                )
            if kind == "cdc" and body.get("dataChange", False):
                yield Violation(
                    "changeDataFeed", report.version, f"cdc {body['path']}", "dataChange is true"
                )
    paths = [path for path, _ in snapshot.files]
    for path in {p for p in paths if paths.count(p) > 1}:
        yield Violation(
            "protocol", snapshot.version, f"add {path}", "active twice with different DVs"
        )
    for version, files in log.checkpoints.items():
        if (
            any(f.kind == "multi-part" for f in files)
            and "v2Checkpoint" in snapshot.reader_features
        ):
            yield Violation(
                "v2Checkpoint", version, "checkpoint", "multi-part checkpoint on a V2 table"
            )


def _protocol_action_rules(version: int, protocol: dict) -> Iterator[Violation]:
    reader, writer = protocol.get("readerFeatures"), protocol.get("writerFeatures")
    if (reader is not None) != (protocol["minReaderVersion"] == 3):
        yield Violation(
            "protocol", version, "protocol", "readerFeatures must exist iff minReaderVersion is 3"
        )
    if (writer is not None) != (protocol["minWriterVersion"] == 7):
        yield Violation(
            "protocol", version, "protocol", "writerFeatures must exist iff minWriterVersion is 7"
        )
    if reader and not set(reader) <= set(writer or ()):
        yield Violation(
            "protocol", version, "protocol", "reader features missing from writerFeatures"
        )


def _claim_rules(
    feature: str, claimed: Mapping[str, str], history: list[VersionReport], snapshot: Snapshot
) -> Iterator[Violation]:
    """The latest metaData and protocol actions say what the claim says."""
    key, _ = FEATURE_PROPERTIES[feature]
    actual = snapshot.configuration.get(key)
    if str(actual).lower() != str(claimed[key]).lower():
        yield Violation(
            feature,
            _last_version_with(history, "metaData"),
            "metaData",
            f"configuration has {key}={actual!r}, the claim is {claimed[key]!r}",
        )
    protocol = snapshot.protocol or {}
    reader_needed, writer_needed = REQUIRED_PROTOCOL[feature]
    legacy_ok = (feature == "changeDataFeed" and 4 <= protocol.get("minWriterVersion", 0) < 7) or (
        feature == "columnMapping"
        and protocol.get("minReaderVersion") == 2
        and protocol.get("minWriterVersion") in (5, 6)
    )
    reader_features = set(snapshot.reader_features)
    if protocol.get("minReaderVersion") == 2:
        reader_features.add("columnMapping")  # reader version 2 is column mapping's own
    missing = (reader_needed - reader_features) | (writer_needed - snapshot.writer_features)
    if missing and not legacy_ok:
        yield Violation(
            feature,
            _last_version_with(history, "protocol"),
            "protocol",
            f"does not list {sorted(missing)} (reader {protocol.get('minReaderVersion')}, "
            f"writer {protocol.get('minWriterVersion')})",
        )


def _change_data_feed(
    log: DeltaLog, history: list[VersionReport], snapshot: Snapshot
) -> Iterator[Violation]:
    """Versions that rewrote existing rows (updates, copy-on-write deletes) carry cdc actions.

    Deletes done with deletion vectors need none: change readers derive them from the DVs.
    """
    for report in history:
        if not _enabled("changeDataFeed", report.configuration):
            continue
        if _metric(report, _REWRITE_METRICS) > 0 and report.cdc_files == 0:
            yield Violation(
                "changeDataFeed",
                report.version,
                "cdc",
                f"{report.operation} rewrote rows ({report.operation_metrics}) "
                "but wrote no cdc action",
            )


def _row_tracking(
    log: DeltaLog, history: list[VersionReport], snapshot: Snapshot
) -> Iterator[Violation]:
    seen_paths: set[str] = set()
    high_water_mark = -1
    for report in history:
        enabled = "rowTracking" in set((report.protocol or {}).get("writerFeatures") or ())
        for action in report.actions:
            if "add" not in action:
                continue
            add = action["add"]
            where = f"add {add['path']}"
            if enabled:
                if add.get("baseRowId") is None or add.get("defaultRowCommitVersion") is None:
                    yield Violation(
                        "rowTracking",
                        report.version,
                        where,
                        "missing baseRowId/defaultRowCommitVersion",
                    )
                elif add["path"] not in seen_paths:
                    if add["defaultRowCommitVersion"] != report.version:
                        yield Violation(
                            "rowTracking",
                            report.version,
                            where,
                            f"defaultRowCommitVersion {add['defaultRowCommitVersion']} of a new "
                            f"file is not the commit version",
                        )
                    if add["baseRowId"] <= high_water_mark:
                        yield Violation(
                            "rowTracking",
                            report.version,
                            where,
                            f"baseRowId {add['baseRowId']} not above the previous high-water "
                            f"mark {high_water_mark}",
                        )
            seen_paths.add(add["path"])
        new_mark = report.row_id_high_water_mark
        if enabled:
            last_row_ids = [
                f.base_row_id + f.records - 1
                for f in report.added_files
                if f.base_row_id is not None and f.records
            ]
            if last_row_ids and (new_mark is None or new_mark < max(last_row_ids)):
                yield Violation(
                    "rowTracking",
                    report.version,
                    f"domainMetadata {ROW_TRACKING_DOMAIN}",
                    f"high-water mark {new_mark} below the highest row id {max(last_row_ids)}",
                )
        high_water_mark = new_mark if new_mark is not None else high_water_mark
    for key in ("materializedRowIdColumnName", "materializedRowCommitVersionColumnName"):
        if not snapshot.configuration.get(f"delta.rowTracking.{key}"):
            yield Violation(
                "rowTracking",
                _last_version_with(history, "metaData"),
                "metaData",
                f"configuration lacks delta.rowTracking.{key}",
            )
    ranges = sorted(
        (add["baseRowId"], add["baseRowId"] + (num_records(add) or 1) - 1, add["path"])
        for add in snapshot.files.values()
        if add.get("baseRowId") is not None
    )
    for (_, end, path), (start, _, next_path) in zip(ranges, ranges[1:], strict=False):
        if start <= end and path != next_path:
            yield Violation(
                "rowTracking", snapshot.version, f"add {next_path}", f"row ids overlap {path}"
            )
    domain = snapshot.domains.get(ROW_TRACKING_DOMAIN)
    if snapshot.files and row_id_high_water_mark(domain) is None:
        yield Violation(
            "rowTracking",
            snapshot.version,
            f"domainMetadata {ROW_TRACKING_DOMAIN}",
            "no high-water mark in the snapshot",
        )


def _deletion_vectors(
    log: DeltaLog, history: list[VersionReport], snapshot: Snapshot
) -> Iterator[Violation]:
    for report in history:
        descriptors = [
            (next(iter(a)), a[next(iter(a))])
            for a in report.actions
            if ("add" in a or "remove" in a) and a[next(iter(a))].get("deletionVector")
        ]
        for kind, body in descriptors:
            dv = body["deletionVector"]
            problem = _descriptor_problem(dv)
            if problem:
                yield Violation(
                    "deletionVectors", report.version, f"{kind} {body['path']}", problem
                )
        added = sum(1 for kind, _ in descriptors if kind == "add")
        if _metric(report, _DV_ADDED_METRICS) > 0 and added == 0:
            yield Violation(
                "deletionVectors",
                report.version,
                "add",
                f"{report.operation} reports deletion vectors added but no add carries one",
            )
    for add in snapshot.files.values():
        dv = add.get("deletionVector")
        relative = dv and deletion_vector_relative_path(dv)
        if relative and log.file_size(relative) is None:
            yield Violation(
                "deletionVectors",
                snapshot.version,
                f"add {add['path']}",
                f"deletion vector file {relative} does not exist",
            )


def _descriptor_problem(dv: dict) -> str | None:
    if dv.get("storageType") not in ("u", "i", "p"):
        return f"storageType {dv.get('storageType')!r} is not u, i or p"
    if dv["storageType"] == "i" and dv.get("offset") is not None:
        return "inline deletion vector with an offset"
    if not isinstance(dv.get("sizeInBytes"), int) or dv["sizeInBytes"] <= 0:
        return f"sizeInBytes {dv.get('sizeInBytes')!r} is not a positive integer"
    if not isinstance(dv.get("cardinality"), int) or dv["cardinality"] <= 0:
        return f"cardinality {dv.get('cardinality')!r} is not a positive integer"
    if dv["storageType"] == "u" and len(dv.get("pathOrInlineDv", "")) < 20:
        return "pathOrInlineDv is shorter than a Z85-encoded UUID"
    return None


def _in_commit_timestamps(
    log: DeltaLog, history: list[VersionReport], snapshot: Snapshot
) -> Iterator[Violation]:
    configuration = snapshot.configuration
    start = int(configuration.get("delta.inCommitTimestampEnablementVersion", 0))
    previous = None
    for report in history:
        if report.version < start:
            continue
        first = report.actions[0] if report.actions else {}
        ict = first.get("commitInfo", {}).get("inCommitTimestamp")
        if "commitInfo" not in first:
            yield Violation(
                "inCommitTimestamp", report.version, "commitInfo", "is not the first action"
            )
        elif not isinstance(ict, int):
            yield Violation(
                "inCommitTimestamp", report.version, "commitInfo", "has no inCommitTimestamp"
            )
        elif previous is not None and ict <= previous:
            yield Violation(
                "inCommitTimestamp",
                report.version,
                "commitInfo",
                f"inCommitTimestamp {ict} not after the previous commit's {previous}",
            )
        if report.version == start and "delta.inCommitTimestampEnablementTimestamp" in (
            configuration
        ):
            expected = int(configuration["delta.inCommitTimestampEnablementTimestamp"])
            if ict != expected:
                yield Violation(
                    "inCommitTimestamp",
                    report.version,
                    "commitInfo",
                    f"inCommitTimestamp {ict} is not the enablement timestamp {expected}",
                )
        previous = ict if isinstance(ict, int) else previous


def _primitive_types(data_type) -> set[str]:
    """Every primitive type name in a schema, nested types (struct, array, map) included."""
    if isinstance(data_type, str):
        return {data_type}
    found: set[str] = set()
    for field in data_type.get("fields", []):
        found |= _primitive_types(field["type"])
    for key in ("elementType", "keyType", "valueType"):
        if key in data_type:
            found |= _primitive_types(data_type[key])
    return found


def _schema_fields(schema: dict, parent: str = "") -> Iterator[tuple[str, dict]]:
    for column in schema.get("fields", []):
        name = f"{parent}{column['name']}"
        yield name, column
        data_type = column["type"]
        if isinstance(data_type, dict) and data_type.get("type") == "struct":
            yield from _schema_fields(data_type, f"{name}.")


def _column_mapping(
    log: DeltaLog, history: list[VersionReport], snapshot: Snapshot
) -> Iterator[Violation]:
    """Every column has a physical name and id; data files use them (names and field_ids)."""
    version = _last_version_with(history, "metaData")
    ids, physical = {}, {}
    for name, column in _schema_fields(snapshot.schema):
        metadata = column.get("metadata", {})
        if "delta.columnMapping.id" not in metadata or not metadata.get(
            "delta.columnMapping.physicalName"
        ):
            yield Violation(
                "columnMapping", version, "metaData", f"column {name} has no physical name or id"
            )
            continue
        ids[name] = metadata["delta.columnMapping.id"]
        physical[name] = metadata["delta.columnMapping.physicalName"]
    if len(set(ids.values())) != len(ids) or len(set(physical.values())) != len(physical):
        yield Violation("columnMapping", version, "metaData", "column ids or names not unique")
    max_id = int(snapshot.configuration.get("delta.columnMapping.maxColumnId", -1))
    if ids and max_id < max(ids.values()):
        yield Violation(
            "columnMapping", version, "metaData", f"maxColumnId {max_id} below a column id"
        )
    top_level = {column["name"]: column.get("metadata", {}) for column in snapshot.schema["fields"]}
    for add in snapshot.files.values():
        with log.fs.open_input_file(log.path(add["path"])) as handle:
            file_schema = pq.read_schema(handle)
        for name, metadata in top_level.items():
            physical_name = metadata.get("delta.columnMapping.physicalName")
            if physical_name is None:
                continue
            index = file_schema.get_field_index(physical_name)
            if index < 0:
                continue  # a column added after the file was written reads as null
            field_id = (file_schema.field(index).metadata or {}).get(b"PARQUET:field_id")
            if field_id is None or int(field_id) != metadata.get("delta.columnMapping.id"):
                yield Violation(
                    "columnMapping",
                    snapshot.version,
                    f"add {add['path']}",
                    f"column {name} ({physical_name}) has field_id {field_id!r}, "
                    f"the schema says {metadata.get('delta.columnMapping.id')}",
                )
        if top_level and not any(
            m.get("delta.columnMapping.physicalName") in file_schema.names
            for m in top_level.values()
        ):
            yield Violation(
                "columnMapping",
                snapshot.version,
                f"add {add['path']}",
                f"no column stored under its physical name (file has {file_schema.names})",
            )


def _v2_checkpoints(
    log: DeltaLog, history: list[VersionReport], snapshot: Snapshot
) -> Iterator[Violation]:
    """Checkpoints written once the feature is on follow the V2 spec and naming."""
    for version, files in sorted(log.checkpoints.items()):
        for checkpoint in files:
            if checkpoint.kind == "multi-part":
                continue  # reported by the protocol rules
            where = f"checkpoint {checkpoint.name}"
            actions = log.checkpoint_actions([checkpoint])
            metadata = [a["checkpointMetadata"] for a in actions if "checkpointMetadata" in a]
            if checkpoint.kind == "uuid" and len(metadata) != 1:
                yield Violation(
                    "v2Checkpoint", version, where, "needs exactly one checkpointMetadata"
                )
            if metadata and metadata[0].get("version") != version:
                yield Violation(
                    "v2Checkpoint",
                    version,
                    where,
                    f"checkpointMetadata.version {metadata[0].get('version')} != {version}",
                )
            for sidecar in (a["sidecar"] for a in actions if "sidecar" in a):
                size = log.file_size(f"_delta_log/_sidecars/{sidecar['path']}")
                if size != sidecar.get("sizeInBytes"):
                    yield Violation(
                        "v2Checkpoint",
                        version,
                        f"sidecar {sidecar['path']}",
                        f"file size {size} != sizeInBytes {sidecar.get('sizeInBytes')}",
                    )
    pointer = log.last_checkpoint() or {}
    v2_path = (pointer.get("v2Checkpoint") or {}).get("path")
    if v2_path and not log.exists(f"_delta_log/{v2_path}"):
        yield Violation(
            "v2Checkpoint", pointer.get("version"), "_last_checkpoint", f"{v2_path} is missing"
        )


def _iceberg_compat_v2(
    log: DeltaLog, history: list[VersionReport], snapshot: Snapshot
) -> Iterator[Violation]:
    """The writer requirements of PROTOCOL.md's IcebergCompatV2, for the versions it is on:
    column mapping on, no deletion vectors and no icebergCompatV1, numRecords in every new
    add, only Iceberg's types, and ids for the elements, keys and values of arrays and maps."""
    for report in history:
        configuration = report.configuration
        if str(configuration.get("delta.enableIcebergCompatV2", "")).lower() != "true":
            continue
        if "metaData" in report.action_counts:  # the configuration as this version set it
            if not _enabled("columnMapping", configuration):
                yield Violation(
                    "icebergCompatV2", report.version, "metaData", "column mapping is off"
                )
            for other in ("delta.enableDeletionVectors", "delta.enableIcebergCompatV1"):
                if str(configuration.get(other, "")).lower() == "true":
                    yield Violation(
                        "icebergCompatV2", report.version, "metaData", f"{other} is true"
                    )
        for add in (a["add"] for a in report.actions if "add" in a):
            if num_records(add) is None:
                yield Violation(
                    "icebergCompatV2", report.version, f"add {add['path']}", "no numRecords"
                )
    if not _enabled("icebergCompatV2", snapshot.configuration):
        return
    version = _last_version_with(history, "metaData")
    for name, column in _schema_fields(snapshot.schema):
        data_type = column["type"]
        for primitive in _primitive_types(data_type):
            if primitive not in _ICEBERG_V2_TYPES and not primitive.startswith("decimal("):
                yield Violation(
                    "icebergCompatV2", version, "metaData", f"column {name} holds {primitive}"
                )
        nested = isinstance(data_type, dict) and data_type.get("type") in ("array", "map")
        if nested and not set(_NESTED_IDS_KEYS) & set(column.get("metadata", {})):
            yield Violation(
                "icebergCompatV2", version, "metaData", f"column {name} has no nested field ids"
            )


_EVIDENCE = {
    "changeDataFeed": _change_data_feed,
    "rowTracking": _row_tracking,
    "deletionVectors": _deletion_vectors,
    "inCommitTimestamp": _in_commit_timestamps,
    "columnMapping": _column_mapping,
    "v2Checkpoint": _v2_checkpoints,
    "icebergCompatV2": _iceberg_compat_v2,
}
