"""Each Delta feature, enabled through Spark SQL, is confirmed from the log itself; a wrong claim
(faked in a COPY of the log) fails the check, naming the version and the action at fault."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from lakehouse.delta.conformance import check_conformance
from lakehouse.delta.log import DeltaLog, deletion_vector_relative_path
from python_tests.conftest import unique_schema

FEATURES = {
    "changeDataFeed": {"delta.enableChangeDataFeed": "true"},
    "rowTracking": {"delta.enableRowTracking": "true"},
    "deletionVectors": {"delta.enableDeletionVectors": "true"},
    "inCommitTimestamp": {"delta.enableInCommitTimestamps": "true"},
    "columnMapping": {"delta.columnMapping.mode": "name"},
    "v2Checkpoint": {"delta.checkpointPolicy": "v2", "delta.checkpointInterval": "2"},
}


@pytest.fixture(scope="module")
def feature_tables(delta_spark) -> dict[str, tuple[str, dict[str, str]]]:
    """One small table with every feature on (one table keeps the test fast on 2 cores):
    insert, update, delete, merge, so that every kind of action shows in its log."""
    schema = unique_schema("conformance")
    delta_spark.sql(f"create schema `{schema}`")
    name = f"`{schema}`.`every_feature`"
    claimed = {key: value for properties in FEATURES.values() for key, value in properties.items()}
    options = ", ".join(f"'{k}' = '{v}'" for k, v in claimed.items())
    delta_spark.sql(
        f"create table {name} (id bigint, v string) using delta tblproperties ({options})"
    )
    delta_spark.sql(f"insert into {name} select id, cast(id as string) from range(0, 40)")
    delta_spark.sql(f"update {name} set v = 'updated' where id < 5")
    delta_spark.sql(f"delete from {name} where id between 10 and 12")
    delta_spark.sql(
        f"merge into {name} as t using (select id, 'merged' as v from range(35, 45)) as s "
        "on t.id = s.id when matched then update set v = s.v when not matched then insert *"
    )
    location = delta_spark.sql(f"describe detail {name}").collect()[0].location
    yield {feature: (location, claimed) for feature in FEATURES}
    delta_spark.sql(f"drop schema `{schema}` cascade")


def _history(location: str):
    return DeltaLog(location).history()


@pytest.mark.parametrize("feature", FEATURES)
def test_the_log_confirms_the_claimed_feature(feature_tables, feature):
    location, claimed = feature_tables[feature]
    log = DeltaLog(location)
    assert check_conformance(log, claimed) == []
    protocol = log.snapshot().protocol
    assert feature in protocol["writerFeatures"]


def test_change_data_feed_writes_cdc_for_updates_and_merges(feature_tables):
    location, _ = feature_tables["changeDataFeed"]
    log = DeltaLog(location)
    by_operation = {r.operation: r for r in log.history()}
    for operation in ("UPDATE", "MERGE"):
        cdc = [a["cdc"] for a in by_operation[operation].actions if "cdc" in a]
        # Delta 4.0 wrote them under _change_data/; 4.4 under a random two-letter directory,
        # as data files with random prefixes: the protocol fixes only the relative path.
        assert cdc and all(c["path"].rsplit("/", 1)[-1].startswith("cdc-") for c in cdc)
        assert all(log.exists(c["path"]) and c["dataChange"] is False for c in cdc)
    # With deletion vectors a DELETE writes no cdc file: change readers diff the DVs.
    assert by_operation["DELETE"].cdc_files == 0


def test_row_tracking_assigns_row_ids_and_a_high_water_mark(feature_tables):
    location, _ = feature_tables["rowTracking"]
    log = DeltaLog(location)
    snapshot = log.snapshot()
    assert {"rowTracking", "domainMetadata"} <= snapshot.writer_features
    ranges = sorted(
        (f["baseRowId"], json.loads(f["stats"])["numRecords"]) for f in snapshot.files.values()
    )
    highest = max(base + records - 1 for base, records in ranges)
    assert snapshot.row_id_high_water_mark >= highest
    assert all(f["defaultRowCommitVersion"] <= snapshot.version for f in snapshot.files.values())


def test_delete_leaves_deletion_vectors_on_files(feature_tables):
    location, _ = feature_tables["deletionVectors"]
    log = DeltaLog(location)
    delete = next(r for r in log.history() if r.operation == "DELETE")
    descriptors = [f.deletion_vector for f in delete.added_files if f.deletion_vector]
    assert descriptors
    assert all(log.exists(deletion_vector_relative_path(dv)) for dv in descriptors)
    assert sum(dv["cardinality"] for dv in descriptors) >= 3
    assert {"deletionVectors"} <= log.snapshot().reader_features


def test_in_commit_timestamps_are_first_and_monotonic(feature_tables):
    location, _ = feature_tables["inCommitTimestamp"]
    history = _history(location)
    stamps = [r.actions[0]["commitInfo"]["inCommitTimestamp"] for r in history]
    assert stamps == sorted(stamps) and len(set(stamps)) == len(stamps)
    assert [r.timestamp for r in history] == stamps


def test_column_mapping_stores_physical_names_and_field_ids(feature_tables):
    location, _ = feature_tables["columnMapping"]
    log = DeltaLog(location)
    fields = log.snapshot().schema["fields"]
    physical = [f["metadata"]["delta.columnMapping.physicalName"] for f in fields]
    assert all(name.startswith("col-") for name in physical)
    assert sorted(f["metadata"]["delta.columnMapping.id"] for f in fields) == [1, 2]


def test_v2_checkpoint_is_uuid_named_with_sidecars(feature_tables):
    location, _ = feature_tables["v2Checkpoint"]
    log = DeltaLog(location)
    assert log.checkpoints, "checkpointInterval=2 must have written a checkpoint"
    kinds = {c.kind for files in log.checkpoints.values() for c in files}
    assert "uuid" in kinds and "multi-part" not in kinds
    snapshot = log.snapshot()
    assert snapshot.checkpoint.kind == "uuid"
    pointer = log.last_checkpoint()
    assert pointer["version"] == snapshot.checkpoint.version
    assert pointer["v2Checkpoint"]["path"] == snapshot.checkpoint.name
    # The snapshot read from the checkpoint equals the one replayed from every commit.
    replayed = DeltaLog(location)
    replayed.checkpoints = {}
    assert replayed.snapshot().files.keys() == snapshot.files.keys()


# --- wrong claims, faked in a copy of the log -----------------------------------------------
def _rewrite(log_dir: Path, version: int, change) -> None:
    path = log_dir / f"{version:020d}.json"
    actions = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    path.write_text("\n".join(json.dumps(a) for a in change(actions)) + "\n")


def _version_of(location: str, operation: str) -> int:
    return next(r.version for r in _history(location) if r.operation == operation)


def _drop(kind: str):
    return lambda actions: [a for a in actions if kind not in a]


def _strip_from_adds(*keys: str):
    def change(actions):
        for action in actions:
            for key in keys:
                action.get("add", {}).pop(key, None)
        return actions

    return change


def _commit_info_last(actions):
    return [a for a in actions if "commitInfo" not in a] + [a for a in actions if "commitInfo" in a]


def _without_field_ids(location: str) -> dict:
    """Rewrite the schema without column mapping metadata (as if ids were never assigned)."""

    def change(actions):
        for action in actions:
            if "metaData" in action:
                schema = json.loads(action["metaData"]["schemaString"])
                for column in schema["fields"]:
                    column["metadata"] = {}
                action["metaData"]["schemaString"] = json.dumps(schema)
        return actions

    return change


def _break_checkpoint(log_dir: Path) -> int:
    checkpoint = sorted(log_dir.glob("*.checkpoint.*.json"))[-1]
    lines = [json.loads(line) for line in checkpoint.read_text().splitlines()]
    kept = [a for a in lines if "checkpointMetadata" not in a]
    checkpoint.write_text("\n".join(json.dumps(a) for a in kept) + "\n")
    return int(checkpoint.name[:20])


TAMPERING = {
    # feature: (operation whose commit is changed, change, action named in the violation)
    "changeDataFeed": ("UPDATE", lambda loc: _drop("cdc"), "cdc"),
    "rowTracking": ("MERGE", lambda loc: _strip_from_adds("baseRowId"), "add "),
    "deletionVectors": ("DELETE", lambda loc: _strip_from_adds("deletionVector"), "add"),
    "inCommitTimestamp": ("DELETE", lambda loc: _commit_info_last, "commitInfo"),
    "columnMapping": ("CREATE TABLE", _without_field_ids, "metaData"),
}


@pytest.mark.parametrize("feature", [*TAMPERING, "v2Checkpoint"])
def test_a_faked_claim_in_a_copied_log_fails_naming_version_and_action(
    feature_tables, feature, tmp_path
):
    location, claimed = feature_tables[feature]
    original = Path(DeltaLog(location).root)
    copy = tmp_path / "copy"
    shutil.copytree(original, copy)
    if feature == "v2Checkpoint":
        version, action = _break_checkpoint(copy / "_delta_log"), "checkpoint "
    else:
        operation, change, action = TAMPERING[feature]
        # Readers start from the newest checkpoint: drop them so the faked commit is replayed.
        for checkpoint in (copy / "_delta_log").glob("*.checkpoint.*"):
            checkpoint.unlink()
        version = _version_of(location, operation)
        _rewrite(copy / "_delta_log", version, change(location))
    violations = [
        v for v in check_conformance(DeltaLog(str(copy)), claimed) if v.feature == feature
    ]
    assert any(v.version == version and v.action.startswith(action) for v in violations), violations
    assert check_conformance(DeltaLog(location), claimed) == []  # the original is untouched


def test_turning_a_feature_off_contradicts_the_claim(feature_tables, delta_spark):
    location, claimed = feature_tables["changeDataFeed"]
    delta_spark.sql(
        f"alter table delta.`{location}` set tblproperties (delta.enableChangeDataFeed = false)"
    )
    try:
        violations = check_conformance(DeltaLog(location), claimed)
        last = DeltaLog(location).snapshot().version
        assert ("changeDataFeed", last, "metaData") in [
            (v.feature, v.version, v.action) for v in violations
        ]
    finally:
        delta_spark.sql(
            f"alter table delta.`{location}` set tblproperties (delta.enableChangeDataFeed = true)"
        )


def test_cli_inspects_a_path_and_a_table_name(feature_tables, capsys):
    from lakehouse.cli import main

    location, _ = feature_tables["rowTracking"]
    assert main(["inspect", location, "--json", "--check"]) == 0
    by_path = json.loads(capsys.readouterr().out)
    snapshot = DeltaLog(location).snapshot()
    assert by_path["snapshot"]["active_files"] == len(snapshot.files)
    assert [v["version"] for v in by_path["versions"]] == list(range(snapshot.version + 1))
    assert by_path["violations"] == []
    # A managed table lives in <warehouse>/<schema>.db/<table>.
    schema, table = Path(location).parent.name.removesuffix(".db"), Path(location).name
    assert main(["inspect", f"{schema}.{table}", "--version", "1"]) == 0
    text = capsys.readouterr().out
    assert "  version: 1" in text and "row_id_high_water_mark: 39" in text
    assert main(["inspect", "no_such_schema.no_such_table"]) == 1
    assert "no_such_table" in capsys.readouterr().err
