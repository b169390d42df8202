"""MERGE and the other incremental strategies, checked on the rows, the change feed and the
history of the target tables."""

from __future__ import annotations

import json
import random
import time
from pathlib import Path

import pytest
from deltalake import DeltaTable

from lakehouse.delta.log import DeltaLog
from python_tests.readers import delta_rs_sql_read, duckdb_with_delta


def row_literals(rows: list[tuple]) -> str:
    return ", ".join(
        "(" + ", ".join("null" if v is None else repr(v) for v in row) + ")" for row in rows
    )


def values(rows: list[tuple], columns: str) -> str:
    return f"select * from values {row_literals(rows)} as t({columns})"


def model(config: str, rows: list[tuple], columns: str = "id, name, amount") -> str:
    return f"{{{{ config({config}) }}}}\n{values(rows, columns)}\n"


def table_rows(project, name: str, columns: str = "id, name, amount") -> list[tuple]:
    return sorted(
        (tuple(r) for r in project.rows(f"select {columns} from {project.relation(name)}")),
        key=repr,
    )


def change_count(project, name: str) -> int:
    return project.rows(f"select count(*) as n from table_changes('{project.schema}.{name}', 0)")[
        0
    ].n


CDF = "tblproperties={'delta.enableChangeDataFeed': 'true'}"


class TestMerge:
    def test_null_safe_composite_keys_and_no_op_rerun(self, scratch_project):
        p = scratch_project
        config = f"unique_key=['id', 'name'], {CDF}"
        batch = [(1, "a", 10), (None, "b", 20), (3, None, 30)]
        p.model("merged", model(config, batch))
        p.dbt("run", "-s", "merged")
        p.dbt("run", "-s", "merged")  # same batch again: matched, unchanged
        assert table_rows(p, "merged") == sorted(batch, key=repr)
        changes = change_count(p, "merged")
        latest = p.history("merged")[0].version

        p.dbt("run", "-s", "merged")
        assert change_count(p, "merged") == changes, "a rerun must add no change-data rows"
        assert table_rows(p, "merged") == sorted(batch, key=repr)
        # The rerun's one commit is its MERGE, and it changed no row. Without deletion vectors
        # Delta still commits it: it rewrites the files holding matched rows (docs/adapter.md,
        # merge_skip_unchanged); nothing else (properties, constraints) is committed again.
        rerun = [h for h in p.history("merged") if h.version > latest]
        assert [h.operation for h in rerun] == ["MERGE"]
        metrics = rerun[0].operationMetrics
        changed = ("numTargetRowsUpdated", "numTargetRowsInserted", "numTargetRowsDeleted")
        assert {name: metrics[name] for name in changed} == dict.fromkeys(changed, "0")

        p.model("merged", model(config, [(None, "b", 21), (4, "d", 40)]))
        p.dbt("run", "-s", "merged")
        assert table_rows(p, "merged") == sorted(
            [(1, "a", 10), (None, "b", 21), (3, None, 30), (4, "d", 40)], key=repr
        )
        updates = p.rows(
            f"select id, amount from table_changes('{p.schema}.merged', 0) "
            "where _change_type = 'update_postimage'"
        )
        assert [(r.id, r.amount) for r in updates] == [(None, 21)]

    def test_delete_clause_conditions_and_not_matched_by_source(self, scratch_project):
        p = scratch_project
        columns = "id, name, amount, is_deleted"
        p.model(
            "clauses",
            model("unique_key='id'", [(i, f"n{i}", i * 10, False) for i in range(1, 7)], columns),
        )
        p.dbt("run", "-s", "clauses")
        config = (
            "unique_key='id', matched_delete_condition='DBT_INTERNAL_SOURCE.is_deleted', "
            "matched_condition='DBT_INTERNAL_SOURCE.amount >= DBT_INTERNAL_DEST.amount', "
            "not_matched_condition='DBT_INTERNAL_SOURCE.amount > 0', "
            "not_matched_by_source_action='delete', "
            "not_matched_by_source_condition='DBT_INTERNAL_DEST.id > 5'"
        )
        batch = [
            (1, "n1", 10, True),  # flagged: deleted
            (2, "n2", 99, False),  # newer amount: updated
            (3, "n3", 1, False),  # smaller amount: the matched condition keeps the old row
            (7, "n7", 70, False),  # new: inserted
            (8, "n8", -1, False),  # new but fails the not-matched condition
            (4, "n4", 40, False),
            (5, "n5", 50, False),
        ]  # 6 is absent from the source and id > 5: deleted by source
        p.model("clauses", model(config, batch, columns))
        p.dbt("run", "-s", "clauses")
        assert table_rows(p, "clauses", "id, amount") == [
            (2, 99),
            (3, 30),
            (4, 40),
            (5, 50),
            (7, 70),
        ]

    def test_not_matched_by_source_update_and_update_columns(self, scratch_project):
        p = scratch_project
        p.model("soft", model("unique_key='id'", [(1, "a", 1), (2, "b", 2)]))
        p.dbt("run", "-s", "soft")
        config = (
            "unique_key='id', merge_update_columns=['amount'], "
            "not_matched_by_source_action='update', "
            "not_matched_by_source_set={'amount': '0'}"
        )
        p.model("soft", model(config, [(1, "renamed", 100)]))
        p.dbt("run", "-s", "soft")
        assert table_rows(p, "soft") == [(1, "a", 100), (2, "b", 0)]

    def test_skip_matched_step_only_inserts(self, scratch_project):
        p = scratch_project
        p.model("insert_only", model("unique_key='id'", [(1, "a", 1)]))
        p.dbt("run", "-s", "insert_only")
        p.model(
            "insert_only",
            model("unique_key='id', skip_matched_step=true", [(1, "z", 9), (2, "b", 2)]),
        )
        p.dbt("run", "-s", "insert_only")
        assert table_rows(p, "insert_only") == [(1, "a", 1), (2, "b", 2)]

    def test_schema_evolution_adds_the_new_column(self, scratch_project):
        p = scratch_project
        p.model("evolving", model("unique_key='id'", [(1, "a", 1)]))
        p.dbt("run", "-s", "evolving")
        p.model(
            "evolving",
            model(
                "unique_key='id', merge_with_schema_evolution=true",
                [(1, "a", 1, "x"), (2, "b", 2, "y")],
                "id, name, amount, note",
            ),
        )
        p.dbt("run", "-s", "evolving")
        assert table_rows(p, "evolving", "id, note") == [(1, "x"), (2, "y")]
        setting = p.rows("set spark.databricks.delta.schema.autoMerge.enabled")[0].value
        assert setting in ("<undefined>", "false"), "the session setting must be restored"

    def test_schema_evolution_setting_is_restored_when_the_merge_fails(self, scratch_project):
        p = scratch_project
        p.model("evolving_fails", model("unique_key='id'", [(1, "a", 1)]))
        p.dbt("run", "-s", "evolving_fails")
        # two source rows for one target row: Delta refuses the MERGE
        p.model(
            "evolving_fails",
            model("unique_key='id', merge_with_schema_evolution=true", [(1, "a", 2), (1, "b", 3)]),
        )
        result = p.dbt("run", "-s", "evolving_fails", expect_success=False)
        assert "DELTA_MULTIPLE_SOURCE_ROW_MATCHING_TARGET_ROW_IN_MERGE" in str(
            result.result[0].message
        )
        setting = p.rows("set spark.databricks.delta.schema.autoMerge.enabled")[0].value
        assert setting in ("<undefined>", "false"), "the session setting must be restored"
        assert table_rows(p, "evolving_fails") == [(1, "a", 1)]

    def test_merge_without_unique_key_inserts_every_row(self, scratch_project):
        p = scratch_project
        config = "incremental_strategy='merge'"
        p.model("keyless", model(config, [(1, "a", 1)]))
        p.dbt("run", "-s", "keyless")
        p.model("keyless", model(config, [(1, "a", 1), (2, "b", 2)]))
        p.dbt("run", "-s", "keyless")
        assert table_rows(p, "keyless") == [(1, "a", 1), (1, "a", 1), (2, "b", 2)]
        assert p.history("keyless")[0].operation == "MERGE"

    def test_delta_s_own_message_reaches_the_user(self, scratch_project):
        """PySpark 4.0.1 cannot build the message of a Delta error class (it reports
        "[INTERNAL_ERROR] Cannot find main error class ..."); the adapter reads Delta's own
        message back from the JVM exception: the error class and the unresolved column."""
        p = scratch_project
        p.model("bad_condition", model("unique_key='id'", [(1, "a", 1)]))
        p.dbt("run", "-s", "bad_condition")
        config = "unique_key='id', matched_condition='DBT_INTERNAL_SOURCE.no_such_column > 0'"
        p.model("bad_condition", model(config, [(1, "a", 2)]))
        result = p.dbt("run", "-s", "bad_condition", expect_success=False)
        message = str(result.result[0].message)
        assert "DELTA_MERGE_UNRESOLVED_EXPRESSION" in message
        assert "no_such_column" in message
        assert "Cannot find main error class" not in message
        assert "\tat org.apache" not in message and "\n\tat " not in message
        assert table_rows(p, "bad_condition") == [(1, "a", 1)]

    @pytest.mark.parametrize(
        "config, expected",
        [
            ("unique_key='id'", [(1, "a", 2), (2, "b", 3)]),
            ("incremental_strategy='append'", [(1, "a", 1), (1, "a", 2), (2, "b", 3)]),
            ("incremental_strategy='delete+insert', unique_key='id'", [(1, "a", 2), (2, "b", 3)]),
        ],
    )
    def test_columns_with_dash_and_space_are_quoted(self, scratch_project, config, expected):
        p = scratch_project
        columns = "id, `first-name`, `unit price`"
        # Delta admits a space in a column name only with column mapping
        config += ", tblproperties={'delta.columnMapping.mode': 'name'}"
        p.model("odd_names", model(config, [(1, "a", 1)], columns))
        p.dbt("run", "-s", "odd_names", "--full-refresh")
        p.model("odd_names", model(config, [(1, "a", 2), (2, "b", 3)], columns))
        p.dbt("run", "-s", "odd_names")
        assert table_rows(p, "odd_names", columns) == expected

    @pytest.mark.parametrize(
        "config, fragment",
        [
            ("unique_key='id', skip_matched_step=true, skip_not_matched_step=true", "both true"),
            ("unique_key='id', not_matched_by_source_action='archive'", "'delete' or 'update'"),
            ("unique_key='id; drop table x'", "Invalid unique_key"),
            ("incremental_strategy='replace_where'", "needs `incremental_predicates`"),
            ("incremental_strategy='upsert_magic'", "upsert_magic"),
        ],
    )
    def test_wrong_configuration_names_the_model_and_option(
        self, scratch_project, config, fragment
    ):
        p = scratch_project
        p.model("misconfigured", model("unique_key='id'", [(1, "a", 1)]))
        p.dbt("run", "-s", "misconfigured", "--full-refresh")
        p.model("misconfigured", model(config, [(1, "a", 2)]))
        result = p.dbt("run", "-s", "misconfigured", expect_success=False)
        message = str(result.result[0].message)
        assert fragment in message
        assert "misconfigured" in message


PRUNED_MODEL = """{{{{ config(unique_key='id', merge_prune_target={prune}, {options}) }}}}
{{% if is_incremental() %}}
select * from values {{{{ var('rows') }}}} as t(id, name, amount)
{{% else %}}
-- eight files, each a contiguous range of ids: Delta's file statistics can rule most out
select id, cast(id % 5 as string) as name, id % 7 as amount from range(0, 8000, 1, 8)
{{% endif %}}
"""


def merge_file_counts(spark, run) -> tuple[int, int]:
    """Delta's own numbers for the one MERGE that `run()` makes: the target files before and
    after data skipping (metrics of the MergeIntoCommand node; DESCRIBE HISTORY lacks them)."""
    store = spark._jsparkSession.sharedState().statusStore()

    def execution_ids() -> list[int]:
        # the store keeps the latest executions only (spark.sql.ui.retainedExecutions)
        return [e.executionId() for e in _seq(store.executionsList())]

    def merge_counts(execution_id: int) -> list[tuple[int, int] | None]:
        values = store.executionMetrics(execution_id)
        found = []
        for node in _seq(store.planGraph(execution_id).allNodes()):
            if "MergeIntoCommand" in node.name():
                metrics = {m.name(): m.accumulatorId() for m in _seq(node.metrics())}
                counts = [
                    values.get(metrics[f"number of target files {when} skipping"])
                    for when in ("before", "after")
                ]
                defined = all(c.isDefined() for c in counts)
                found.append(tuple(int(c.get()) for c in counts) if defined else None)
        return found

    last_before = max(execution_ids(), default=-1)
    run()
    # Spark's listener records the metrics asynchronously: wait until the MERGE's are in.
    for _ in range(60):
        found = [c for i in execution_ids() if i > last_before for c in merge_counts(i)]
        if found and None not in found:
            [only] = found
            return only
        time.sleep(0.5)
    raise AssertionError(f"no complete MERGE metrics recorded: {found}")


def _seq(scala_seq) -> list:
    return [scala_seq.apply(i) for i in range(scala_seq.size())]


WIDENS = "unique_key='id', on_schema_change='sync_all_columns'"
TYPE_WIDENING = "tblproperties={'delta.enableTypeWidening': 'true'}"


def data_files(p, name: str) -> set[str]:
    return {r.f for r in p.rows(f"select _metadata.file_path as f from {p.relation(name)}")}


@pytest.fixture(scope="class")
def widened(scratch_project):
    p = scratch_project
    first = {
        "widens": (f"{WIDENS}, {TYPE_WIDENING}", "cast(1 as int)"),
        "widens_without_the_feature": (WIDENS, "cast(1 as int)"),
        "narrows": (f"{WIDENS}, {TYPE_WIDENING}", "cast(1 as bigint)"),
    }
    for name, (config, amount) in first.items():
        p.model(name, f"{{{{ config({config}) }}}}\nselect 1 as id, {amount} as amount")
    p.dbt("run", "-s", *first)
    files_before = {name: data_files(p, name) for name in first}
    # the next batch: a new row whose amount needs the wider type
    second = {
        "widens": "cast(3000000000 as bigint)",
        "widens_without_the_feature": "cast(3000000000 as bigint)",
        "narrows": "cast(2 as int)",
    }
    for name, amount in second.items():
        p.model(name, f"{{{{ config({first[name][0]}) }}}}\nselect 2 as id, {amount} as amount")
    result = p.dbt("run", "-s", *second, expect_success=False)
    messages = {r.node.name: str(r.message) for r in result.result}
    return p, files_before, messages


class TestTypeWidening:
    """An upstream column whose type grows: widened in place where Delta can (type widening on
    the table, on_schema_change sync_all_columns), refused naming model and column elsewhere."""

    @staticmethod
    def amount_type(p, name: str) -> str:
        return {r.col_name: r.data_type for r in p.rows(f"describe {p.relation(name)}")}["amount"]

    def test_a_widening_is_applied_in_place_and_recorded(self, widened):
        p, files_before, _ = widened
        assert self.amount_type(p, "widens") == "bigint"
        assert table_rows(p, "widens", "id, amount") == [(1, 1), (2, 3_000_000_000)]
        assert files_before["widens"] <= data_files(p, "widens"), "the old file was rewritten"
        operations = [r.operation for r in reversed(p.history("widens"))]
        assert operations[-2:] == ["CHANGE COLUMN", "MERGE"], operations
        location = p.detail("widens").location
        schema = json.loads(DeltaLog(location).snapshot().metadata["schemaString"])
        [amount] = [f for f in schema["fields"] if f["name"] == "amount"]
        assert amount["metadata"]["delta.typeChanges"] == [
            {"fromType": "integer", "toType": "long"}
        ]
        features = p.detail("widens").tableFeatures
        assert "typeWidening" in features, features

    def test_outside_readers_of_a_widened_table(self, widened):
        """What docs/interop.md says of typeWidening: DuckDB's reader (delta-kernel-rs) reads
        the widened values; delta-rs 1.6 refuses the table on both of its read paths."""
        p, _, _ = widened
        location = p.detail("widens").location
        uri = Path(location.removeprefix("file:")).resolve().as_uri()
        read = duckdb_with_delta().sql(f"select id, amount from delta_scan('{uri}') order by id")
        assert read.fetchall() == [(1, 1), (2, 3_000_000_000)]
        for delta_rs_read in (lambda t: t.to_pyarrow_table(), delta_rs_sql_read):
            with pytest.raises(Exception, match="(?i)typeWidening"):
                delta_rs_read(DeltaTable(location.removeprefix("file:")))

    def test_a_widening_without_the_feature_is_refused_and_changes_nothing(self, widened):
        p, files_before, messages = widened
        message = messages["widens_without_the_feature"]
        for part in (
            "widens_without_the_feature",
            "amount",
            "int -> bigint",
            "delta.enableTypeWidening",
            "--full-refresh",
            "Nothing was changed",
        ):
            assert part in message, message  # fmt: skip
        assert self.amount_type(p, "widens_without_the_feature") == "int"
        assert table_rows(p, "widens_without_the_feature", "id, amount") == [(1, 1)]
        assert (
            data_files(p, "widens_without_the_feature")
            == files_before["widens_without_the_feature"]
        )

    def test_a_narrowing_is_refused_and_changes_nothing(self, widened):
        p, _, messages = widened
        message = messages["narrows"]
        for part in ("narrows", "amount", "bigint -> int", "not a widening", "Nothing was changed"):
            assert part in message, message
        assert self.amount_type(p, "narrows") == "bigint"
        assert table_rows(p, "narrows", "id, amount") == [(1, 1)]


class TestMergeTargetPruning:
    def test_same_rows_as_the_plain_merge_and_fewer_files_read(self, scratch_project):
        p = scratch_project
        p.model("pruned", PRUNED_MODEL.format(prune="true", options="merge_prune_key_list_max=3"))
        p.model("plain", PRUNED_MODEL.format(prune="false", options="merge_prune_key_list_max=3"))
        p.dbt("run", "-s", "pruned", "plain")
        rng = random.Random(20261124)
        for batch in range(6):
            # keys of one region of the table (updates), new keys, now and then a NULL key;
            # small batches take the key-list form, larger ones the bounds
            start = rng.randrange(1000, 7000)
            keys = rng.sample(range(start, start + 300), rng.choice([2, 3, 40]))
            keys += [8000 + 10 * batch + i for i in range(rng.randint(0, 3))]
            keys += [None] if rng.random() < 0.3 else []
            rows = [(k, f"b{batch}", rng.randint(0, 99)) for k in keys]
            literal = row_literals(rows)
            files = {
                name: merge_file_counts(
                    p.spark,
                    lambda name=name, literal=literal: p.dbt(
                        "run", "-s", name, "--vars", json.dumps({"rows": literal})
                    ),
                )
                for name in ("pruned", "plain")
            }
            assert table_rows(p, "pruned") == table_rows(p, "plain"), f"batch {batch}: {rows}"
            # the plain MERGE reads every file to find the matches; the pruned one skips some
            before, after = files["plain"]
            assert before == after
            assert files["pruned"][0] == before and files["pruned"][1] < before, files

    def test_refused_with_not_matched_by_source(self, scratch_project):
        p = scratch_project
        p.model(
            "pruned_by_source",
            PRUNED_MODEL.format(prune="true", options="not_matched_by_source_action='delete'"),
        )
        p.dbt("run", "-s", "pruned_by_source")
        result = p.dbt(
            "run", "-s", "pruned_by_source", "--vars", json.dumps({"rows": "(1, 'x', 2)"}),
            expect_success=False,
        )  # fmt: skip
        assert not result.success
        message = str(result.result[0].message)
        assert "pruned_by_source" in message and "not_matched_by_source_action" in message
        assert p.count("pruned_by_source") == 8000, "nothing was merged"


EMPTY_SOURCE_MODEL = """{{{{ config({config}) }}}}
select * from values (1, 'a', 10), (2, 'b', 20) as t(id, name, amount)
{{% if is_incremental() %}}where amount > {{{{ var('above', 100) }}}}{{% endif %}}
"""


class TestEmptyMergeSource:
    def test_an_empty_batch_makes_no_commit_and_a_later_batch_merges(self, scratch_project):
        p = scratch_project
        p.model("empty_batch", EMPTY_SOURCE_MODEL.format(config=f"unique_key='id', {CDF}"))
        p.dbt("run", "-s", "empty_batch")
        versions = len(p.history("empty_batch"))
        p.dbt("run", "-s", "empty_batch")  # the incremental source is empty
        assert len(p.history("empty_batch")) == versions, "no MERGE, no empty commit"
        assert table_rows(p, "empty_batch") == [(1, "a", 10), (2, "b", 20)]
        p.dbt("run", "-s", "empty_batch", "--vars", json.dumps({"above": 15}))
        assert [r.operation for r in p.history("empty_batch")][0] == "MERGE"

    def test_not_matched_by_source_still_acts_on_an_empty_batch(self, scratch_project):
        p = scratch_project
        config = f"unique_key='id', not_matched_by_source_action='delete', {CDF}"
        p.model("empty_by_source", EMPTY_SOURCE_MODEL.format(config=config))
        p.dbt("run", "-s", "empty_by_source")
        p.dbt("run", "-s", "empty_by_source")
        assert p.count("empty_by_source") == 0, "every target row is not matched by the source"


class TestOtherStrategies:
    def test_append(self, scratch_project):
        p = scratch_project
        p.model("appended", model("incremental_strategy='append'", [(1, "a", 1)]))
        p.dbt("run", "-s", "appended")
        p.dbt("run", "-s", "appended")
        assert table_rows(p, "appended") == [(1, "a", 1), (1, "a", 1)]

    def test_insert_overwrite_replaces_only_touched_partitions(self, scratch_project):
        p = scratch_project
        config = "incremental_strategy='insert_overwrite', partition_by='name'"
        p.model("overwritten", model(config, [(1, "a", 1), (2, "b", 2)]))
        p.dbt("run", "-s", "overwritten")
        before = p.rows("set spark.sql.sources.partitionOverwriteMode")[0].value
        p.model("overwritten", model(config, [(3, "b", 3)]))
        p.dbt("run", "-s", "overwritten")
        assert table_rows(p, "overwritten") == [(1, "a", 1), (3, "b", 3)]
        assert p.rows("set spark.sql.sources.partitionOverwriteMode")[0].value == before

    def test_replace_where(self, scratch_project):
        p = scratch_project
        config = "incremental_strategy='replace_where', incremental_predicates=['amount >= 10']"
        p.model("replaced", model(config, [(1, "a", 1), (2, "b", 20)]))
        p.dbt("run", "-s", "replaced")
        p.model("replaced", model(config, [(3, "c", 30)]))
        p.dbt("run", "-s", "replaced")
        assert table_rows(p, "replaced") == [(1, "a", 1), (3, "c", 30)]

    def test_delete_insert(self, scratch_project):
        p = scratch_project
        config = "incremental_strategy='delete+insert', unique_key='id'"
        p.model("reinserted", model(config, [(1, "a", 1), (2, "b", 2)]))
        p.dbt("run", "-s", "reinserted")
        p.model("reinserted", model(config, [(2, "b2", 22), (2, "b3", 23), (3, "c", 3)]))
        p.dbt("run", "-s", "reinserted")
        assert table_rows(p, "reinserted") == [
            (1, "a", 1),
            (2, "b2", 22),
            (2, "b3", 23),
            (3, "c", 3),
        ]

    def test_microbatch_replaces_only_the_batches_it_runs(self, scratch_project):
        p = scratch_project
        columns = "id, ts, amount"

        def events(rows):
            body = ", ".join(f"({i}, timestamp'{ts}', {amount})" for i, ts, amount in rows)
            return (
                "{{ config(materialized='table', event_time='ts') }}\n"
                f"select * from values {body} as t({columns})\n"
            )

        day1, day2, day3 = "2026-01-01 10:00:00", "2026-01-02 10:00:00", "2026-01-03 10:00:00"
        p.model("mb_events", events([(1, day1, 1), (2, day2, 2), (3, day3, 3)]))
        p.model(
            "mb_daily",
            "{{ config(materialized='incremental', incremental_strategy='microbatch',"
            " event_time='ts', begin='2026-01-01', batch_size='day', concurrent_batches=false) }}\n"
            "select * from {{ ref('mb_events') }}\n",
        )
        window = ("--event-time-start", "2026-01-01", "--event-time-end", "2026-01-04")
        p.dbt("run", "-s", "mb_events", "mb_daily", *window)
        assert table_rows(p, "mb_daily", "id, amount") == [(1, 1), (2, 2), (3, 3)]
        # every day changes upstream; only the day-2 batch is rerun
        p.model("mb_events", events([(1, day1, 10), (2, day2, 20), (4, day2, 40), (3, day3, 30)]))
        p.dbt("run", "-s", "mb_events")
        version_before = p.rows(f"describe history {p.relation('mb_daily')}")[0].version
        p.dbt(
            "run",
            "-s",
            "mb_daily",
            "--event-time-start",
            "2026-01-02",
            "--event-time-end",
            "2026-01-03",
        )
        rows = table_rows(p, "mb_daily", "id, amount")
        assert rows == [(1, 1), (2, 20), (3, 3), (4, 40)]
        [commit] = p.rows(f"describe history {p.relation('mb_daily')}")[:1]
        assert commit.version == version_before + 1
        assert (
            commit.operation == "WRITE" and "2026-01-02" in commit.operationParameters["predicate"]
        )


class TestProvenance:
    def test_every_commit_names_its_dbt_run(self, scratch_project):
        p = scratch_project
        invocations = []
        for amount in (1, 2):
            p.model("tagged", model("unique_key='id'", [(1, "a", amount)]))
            p.dbt("run", "-s", "tagged")
            run_results = json.loads((p.work_dir / "target" / "run_results.json").read_text())
            invocations.append(run_results["metadata"]["invocation_id"])
        history = sorted(p.history("tagged"), key=lambda r: r.version)
        tags = [json.loads(r.userMetadata) for r in history]
        assert {t["dbt_node"] for t in tags} == {"model.scratch.tagged"}
        assert {t["dbt_target"] for t in tags} == {"local"}
        assert tags[0]["dbt_invocation_id"] == invocations[0]
        assert tags[-1]["dbt_invocation_id"] == invocations[1]
        assert "git_revision" in tags[0]
        setting = p.rows("set spark.databricks.delta.commitInfo.userMetadata")[0].value
        assert setting == "<undefined>", "the tag must not leak into later commits"
