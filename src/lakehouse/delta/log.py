"""Read a Delta table's transaction log directly, as PROTOCOL.md (delta-io/delta v4.0.1) specifies.

No Spark: JSON commits are parsed with `json`, checkpoints (classic, multi-part, UUID-named V2
with sidecars) with pyarrow. `DeltaLog.history()` replays the log version by version and reports
what each commit did; `DeltaLog.snapshot()` reconstructs a version by action reconciliation
(active files, tombstones, app transaction versions, domain metadata).
"""

from __future__ import annotations

import json
import re
import uuid
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import unquote, urlparse

import pyarrow as pa
import pyarrow.parquet as pq
from pyarrow import fs as pafs

ACTION_TYPES = (
    "add",
    "remove",
    "cdc",
    "metaData",
    "protocol",
    "txn",
    "domainMetadata",
    "commitInfo",
    "checkpointMetadata",
    "sidecar",
)
ROW_TRACKING_DOMAIN = "delta.rowTracking"
_COMMIT = re.compile(r"^(\d{20})\.json$")
_CHECKPOINT = re.compile(
    r"^(?P<version>\d{20})\.checkpoint"
    r"(?:\.(?P<part>\d{10})\.(?P<parts>\d{10})|\.(?P<uuid>[0-9a-fA-F-]{36}))?"
    r"\.(?P<format>parquet|json)$"
)
_Z85 = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.-:+=^!/*?&<>()[]{}@%$#"


class DeltaLogError(ValueError):
    """The path is not a Delta table, or its log cannot be read as the protocol specifies."""


def z85_decode(text: str) -> bytes:
    """Z85 (the Base85 variant of deletion vector descriptors) to bytes."""
    if len(text) % 5:
        raise DeltaLogError(f"Z85 text must have a multiple of 5 characters: {text!r}")
    out = bytearray()
    for start in range(0, len(text), 5):
        value = 0
        for char in text[start : start + 5]:
            value = value * 85 + _Z85.index(char)
        out += value.to_bytes(4, "big")
    return bytes(out)


def deletion_vector_unique_id(descriptor: dict | None) -> str | None:
    """The DV part of a logical file's key: `<storageType><pathOrInlineDv>[@<offset>]`."""
    if not descriptor:
        return None
    unique_id = f"{descriptor['storageType']}{descriptor['pathOrInlineDv']}"
    if descriptor.get("offset") is not None:
        unique_id += f"@{descriptor['offset']}"
    return unique_id


def deletion_vector_relative_path(descriptor: dict) -> str | None:
    """Table-relative path of an on-disk ('u') DV file; None for inline or absolute DVs."""
    if descriptor.get("storageType") != "u":
        return None
    encoded = descriptor["pathOrInlineDv"]
    prefix, z85_uuid = encoded[:-20], encoded[-20:]
    name = f"deletion_vector_{uuid.UUID(bytes=z85_decode(z85_uuid))}.bin"
    return f"{prefix}/{name}" if prefix else name


def file_key(action: dict) -> tuple[str, str | None]:
    """Primary key of a logical file: (path, deletionVector.uniqueId)."""
    return action["path"], deletion_vector_unique_id(action.get("deletionVector"))


def num_records(action: dict) -> int | None:
    stats = action.get("stats")
    if not stats:
        return None
    return json.loads(stats).get("numRecords")


def logical_records(action: dict) -> int | None:
    """Rows a logical file contributes: physical records minus those its DV deletes."""
    records = num_records(action)
    if records is None:
        return None
    return records - (action.get("deletionVector") or {}).get("cardinality", 0)


def row_id_high_water_mark(domain: dict | None) -> int | None:
    """The row-tracking high-water mark of a `delta.rowTracking` domainMetadata action.

    PROTOCOL.md names the key `highWaterMark`; Delta Spark 4.0.1 writes `rowIdHighWaterMark`.
    """
    if not domain or domain.get("removed"):
        return None
    configuration = json.loads(domain.get("configuration") or "{}")
    value = configuration.get("rowIdHighWaterMark", configuration.get("highWaterMark"))
    return None if value is None else int(value)


def _to_python(value: Any, arrow_type: pa.DataType) -> Any:
    """A checkpoint cell as the JSON form of the action: maps as dicts, absent fields dropped."""
    if value is None:
        return None
    if pa.types.is_map(arrow_type):
        return {k: _to_python(v, arrow_type.item_type) for k, v in value}
    if pa.types.is_struct(arrow_type):
        return {
            f.name: _to_python(value[f.name], f.type)
            for f in arrow_type
            if value.get(f.name) is not None
        }
    if pa.types.is_list(arrow_type) or pa.types.is_large_list(arrow_type):
        return [_to_python(v, arrow_type.value_type) for v in value]
    return value


def _actions_from_table(table: pa.Table) -> list[dict]:
    actions = []
    columns = [name for name in table.column_names if name in ACTION_TYPES]
    for row in table.select(columns).to_pylist():
        for name in columns:
            if row[name] is not None:
                actions.append({name: _to_python(row[name], table.schema.field(name).type)})
    return actions


def action_type(action: dict) -> str:
    return next(iter(action))


@dataclass(frozen=True)
class CheckpointFile:
    version: int
    name: str
    kind: str  # "classic", "multi-part" or "uuid"
    format: str  # "parquet" or "json"
    part: int | None = None
    parts: int | None = None


@dataclass
class Snapshot:
    """A table version reconstructed by action reconciliation."""

    version: int
    protocol: dict | None = None
    metadata: dict | None = None
    files: dict[tuple[str, str | None], dict] = field(default_factory=dict)
    tombstones: dict[tuple[str, str | None], dict] = field(default_factory=dict)
    transactions: dict[str, int] = field(default_factory=dict)
    domains: dict[str, dict] = field(default_factory=dict)
    checkpoint: CheckpointFile | None = None

    def apply(self, actions: list[dict]) -> None:
        """Reconcile one commit's (or checkpoint's) actions into this state."""
        for action in actions:
            kind, body = action_type(action), action[action_type(action)]
            if kind == "protocol":
                self.protocol = body
            elif kind == "metaData":
                self.metadata = body
            elif kind == "txn":
                self.transactions[body["appId"]] = body["version"]
            elif kind == "domainMetadata":
                if body.get("removed"):
                    self.domains.pop(body["domain"], None)
                else:
                    self.domains[body["domain"]] = body
            elif kind == "remove":
                self.files.pop(file_key(body), None)
                self.tombstones[file_key(body)] = body
        for action in actions:  # adds after removes: a file may be re-added with a new DV
            if "add" in action:
                self.files[file_key(action["add"])] = action["add"]
                self.tombstones.pop(file_key(action["add"]), None)

    @property
    def configuration(self) -> dict[str, str]:
        return (self.metadata or {}).get("configuration") or {}

    @property
    def reader_features(self) -> set[str]:
        return set((self.protocol or {}).get("readerFeatures") or ())

    @property
    def writer_features(self) -> set[str]:
        return set((self.protocol or {}).get("writerFeatures") or ())

    @property
    def row_id_high_water_mark(self) -> int | None:
        return row_id_high_water_mark(self.domains.get(ROW_TRACKING_DOMAIN))

    @property
    def schema(self) -> dict:
        return json.loads((self.metadata or {}).get("schemaString") or '{"fields": []}')

    @property
    def num_records(self) -> int | None:
        counts = [logical_records(add) for add in self.files.values()]
        return None if None in counts else sum(counts)

    def summary(self) -> dict:
        return {
            "version": self.version,
            "protocol": self.protocol,
            "configuration": self.configuration,
            "active_files": len(self.files),
            "records": self.num_records,
            "tombstones": len(self.tombstones),
            "transactions": self.transactions,
            "domains": sorted(self.domains),
            "row_id_high_water_mark": self.row_id_high_water_mark,
            "deletion_vectors": sum(1 for a in self.files.values() if a.get("deletionVector")),
            "checkpoint": self.checkpoint.name if self.checkpoint else None,
        }


@dataclass
class FileReport:
    path: str
    records: int | None
    base_row_id: int | None
    default_row_commit_version: int | None
    deletion_vector: dict | None


@dataclass
class VersionReport:
    """What one commit did, and the table state right after it."""

    version: int
    timestamp: int  # ms: the in-commit timestamp, else the commit file's modification time
    in_commit_timestamp: int | None
    operation: str | None
    operation_parameters: dict
    operation_metrics: dict
    user_metadata: str | None
    engine_info: str | None
    actions: list[dict]
    protocol: dict | None  # in effect after this version
    configuration: dict[str, str]  # in effect after this version
    files_added: int
    files_removed: int
    records_added: int | None
    records_removed: int | None
    cdc_files: int
    row_id_high_water_mark: int | None
    added_files: list[FileReport]

    @property
    def action_counts(self) -> dict[str, int]:
        return dict(Counter(action_type(a) for a in self.actions))

    @property
    def commit_info(self) -> dict:
        return next((a["commitInfo"] for a in self.actions if "commitInfo" in a), {})

    def summary(self) -> dict:
        return {
            "version": self.version,
            "timestamp": self.timestamp,
            "in_commit_timestamp": self.in_commit_timestamp,
            "operation": self.operation,
            "user_metadata": self.user_metadata,
            "actions": self.action_counts,
            "files_added": self.files_added,
            "files_removed": self.files_removed,
            "records_added": self.records_added,
            "records_removed": self.records_removed,
            "cdc_files": self.cdc_files,
            "row_id_high_water_mark": self.row_id_high_water_mark,
            "deletion_vectors_added": sum(1 for f in self.added_files if f.deletion_vector),
            "protocol": next((a["protocol"] for a in self.actions if "protocol" in a), None),
        }


def _filesystem(table_path: str) -> tuple[pafs.FileSystem, str]:
    """A pyarrow filesystem and the table's path in it (local paths and `file:` URIs too)."""
    parsed = urlparse(str(table_path))
    if parsed.scheme in ("", "file"):
        path = unquote(parsed.path) if parsed.scheme else str(table_path)
        return pafs.LocalFileSystem(), path.rstrip("/") or "/"
    filesystem, path = pafs.FileSystem.from_uri(str(table_path))
    return filesystem, path.rstrip("/")


class DeltaLog:
    """The `_delta_log` of one table. Lists the log once; call `refresh()` to re-list."""

    def __init__(self, table_path: str) -> None:
        self.table_path = str(table_path)
        self.fs, self.root = _filesystem(self.table_path)
        self.log_dir = f"{self.root}/_delta_log"
        self.refresh()

    def refresh(self) -> None:
        try:
            infos = self.fs.get_file_info(pafs.FileSelector(self.log_dir))
        except (FileNotFoundError, OSError) as exc:
            raise DeltaLogError(f"{self.table_path} is not a Delta table: no _delta_log") from exc
        self.commit_mtimes: dict[int, int] = {}
        self.checkpoints: dict[int, list[CheckpointFile]] = {}
        for info in infos:
            if match := _COMMIT.match(info.base_name):
                self.commit_mtimes[int(match[1])] = info.mtime_ns // 1_000_000
            elif match := _CHECKPOINT.match(info.base_name):
                kind = "multi-part" if match["parts"] else "uuid" if match["uuid"] else "classic"
                checkpoint = CheckpointFile(
                    version=int(match["version"]),
                    name=info.base_name,
                    kind=kind,
                    format=match["format"],
                    part=int(match["part"]) if match["part"] else None,
                    parts=int(match["parts"]) if match["parts"] else None,
                )
                self.checkpoints.setdefault(checkpoint.version, []).append(checkpoint)
        if not self.commit_mtimes and not self.checkpoints:
            raise DeltaLogError(f"{self.table_path} is not a Delta table: _delta_log is empty")

    # --- files --------------------------------------------------------------------------
    def path(self, relative: str) -> str:
        """Absolute path in the filesystem of a table-relative (URI-encoded) path."""
        parsed = urlparse(relative)
        if parsed.scheme:
            return _filesystem(relative)[1]
        return f"{self.root}/{unquote(relative)}"

    def exists(self, relative: str) -> bool:
        return self.fs.get_file_info(self.path(relative)).type == pafs.FileType.File

    def file_size(self, relative: str) -> int | None:
        info = self.fs.get_file_info(self.path(relative))
        return info.size if info.type == pafs.FileType.File else None

    def _read_text(self, path: str) -> str:
        with self.fs.open_input_stream(path) as stream:
            return stream.read().decode("utf-8")

    def _read_json_lines(self, path: str) -> list[dict]:
        return [json.loads(line) for line in self._read_text(path).splitlines() if line.strip()]

    def _read_parquet(self, path: str) -> list[dict]:
        with self.fs.open_input_file(path) as handle:
            return _actions_from_table(pq.read_table(handle))

    # --- log entries --------------------------------------------------------------------
    @property
    def latest_version(self) -> int:
        return max([*self.commit_mtimes, *self.checkpoints])

    def commit_actions(self, version: int) -> list[dict]:
        return self._read_json_lines(f"{self.log_dir}/{version:020d}.json")

    def last_checkpoint(self) -> dict | None:
        """The `_last_checkpoint` pointer, when the table has one."""
        path = f"{self.log_dir}/_last_checkpoint"
        if self.fs.get_file_info(path).type != pafs.FileType.File:
            return None
        return json.loads(self._read_text(path))

    def complete_checkpoints(self, version: int) -> list[list[CheckpointFile]]:
        """The usable checkpoints of a version (a multi-part one only with all its parts)."""
        found = self.checkpoints.get(version, [])
        usable = [[c] for c in found if c.kind != "multi-part"]
        multi = sorted((c for c in found if c.kind == "multi-part"), key=lambda c: c.part)
        if multi and len(multi) == multi[0].parts:
            usable.append(multi)
        return usable

    def checkpoint_actions(self, files: list[CheckpointFile]) -> list[dict]:
        """All actions of a checkpoint, its sidecars' file actions included."""
        actions: list[dict] = []
        for checkpoint in files:
            path = f"{self.log_dir}/{checkpoint.name}"
            read = self._read_parquet if checkpoint.format == "parquet" else self._read_json_lines
            actions += read(path)
        sidecars = [a["sidecar"] for a in actions if "sidecar" in a]
        for sidecar in sidecars:
            actions += self._read_parquet(f"{self.log_dir}/_sidecars/{unquote(sidecar['path'])}")
        return actions

    def _start(self, version: int) -> Snapshot:
        """The newest checkpoint at or before `version`, or an empty state before version 0."""
        for candidate in sorted((v for v in self.checkpoints if v <= version), reverse=True):
            usable = self.complete_checkpoints(candidate)
            if usable:
                files = sorted(usable, key=lambda fs: fs[0].kind != "uuid")[0]
                snapshot = Snapshot(version=candidate, checkpoint=files[0])
                snapshot.apply(self.checkpoint_actions(files))
                return snapshot
        if 0 not in self.commit_mtimes:
            raise DeltaLogError(
                f"{self.table_path}: no checkpoint at or before version {version} and no commit 0"
            )
        return Snapshot(version=-1)

    def snapshot(self, version: int | None = None) -> Snapshot:
        """The table at `version` (default: latest), from the newest usable checkpoint."""
        version = self.latest_version if version is None else version
        snapshot = self._start(version)
        for next_version in range(snapshot.version + 1, version + 1):
            if next_version not in self.commit_mtimes:
                raise DeltaLogError(f"{self.table_path}: commit {next_version} is missing")
            snapshot.apply(self.commit_actions(next_version))
            snapshot.version = next_version
        return snapshot

    def history(self) -> list[VersionReport]:
        return list(self.iter_history())

    def iter_history(self) -> Iterator[VersionReport]:
        """Every commit still in the log, oldest first, with the state after it.

        Once old commits are cleaned up, history starts after the oldest checkpoint (the
        state before an earlier commit cannot be reconstructed).
        """
        if 0 in self.commit_mtimes:
            state = Snapshot(version=-1)
        elif self.checkpoints:
            state = self.snapshot(min(self.checkpoints))
        else:
            raise DeltaLogError(f"{self.table_path}: no commit 0 and no checkpoint")
        first = state.version + 1
        for version in range(first, max(self.commit_mtimes) + 1):
            if version not in self.commit_mtimes:
                raise DeltaLogError(f"{self.table_path}: commit {version} is missing")
            actions = self.commit_actions(version)
            removed_records = [
                logical_records(state.files.get(file_key(a["remove"]), a["remove"]))
                for a in actions
                if "remove" in a and a["remove"].get("dataChange", True)
            ]
            state.apply(actions)
            state.version = version
            yield self._report(version, actions, state, removed_records)

    def _report(
        self, version: int, actions: list[dict], state: Snapshot, removed_records: list
    ) -> VersionReport:
        info = next((a["commitInfo"] for a in actions if "commitInfo" in a), {})
        adds = [a["add"] for a in actions if "add" in a and a["add"].get("dataChange", True)]
        added_records = [logical_records(add) for add in adds]
        ict = info.get("inCommitTimestamp")
        return VersionReport(
            version=version,
            timestamp=ict if ict is not None else self.commit_mtimes[version],
            in_commit_timestamp=ict,
            operation=info.get("operation"),
            operation_parameters=info.get("operationParameters") or {},
            operation_metrics=info.get("operationMetrics") or {},
            user_metadata=info.get("userMetadata"),
            engine_info=info.get("engineInfo"),
            actions=actions,
            protocol=state.protocol,
            configuration=dict(state.configuration),
            files_added=len(adds),
            files_removed=len(removed_records),
            records_added=None if None in added_records else sum(added_records),
            records_removed=None if None in removed_records else sum(removed_records),
            cdc_files=sum(1 for a in actions if "cdc" in a),
            row_id_high_water_mark=state.row_id_high_water_mark,
            added_files=[
                FileReport(
                    path=add["path"],
                    records=num_records(add),
                    base_row_id=add.get("baseRowId"),
                    default_row_commit_version=add.get("defaultRowCommitVersion"),
                    deletion_vector=add.get("deletionVector"),
                )
                for add in (a["add"] for a in actions if "add" in a)
            ],
        )
