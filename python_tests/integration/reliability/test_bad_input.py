"""Bad input and dangerous operations: each bad input or hostile argument fails with what was
wrong named and leaves the table as it was; destructive operations are dry runs or refused
without their explicit argument."""

from __future__ import annotations

import pytest

from python_tests.conftest import RELIABILITY
from python_tests.integration.conftest import DbtProject
from python_tests.integration.reliability.shared import model_sql, versions

GOOD_ROWS = "select * from values (1, 'a', 10), (2, 'b', 20), (3, 'c', 30) as t(id, name, amount)"


def failed_message(result) -> str:
    return " ".join(str(r.message) for r in result.result if r.status in ("error", "fail"))


class TestBadInput:
    """Each bad input fails the write with the model, the constraint or column and an example
    value named, and leaves the target's version unchanged."""

    def checked_model(self, p, name: str) -> None:
        p.write(
            f"models/{name}.yml",
            f"""
version: 2
models:
  - name: {name}
    constraints:
      - type: check
        name: amount_positive
        expression: "amount > 0"
    columns:
      - name: id
        constraints:
          - type: not_null
""",
        )
        p.model(name, model_sql("unique_key='id'", GOOD_ROWS))
        p.dbt("run", "-s", name)

    @pytest.mark.parametrize(
        ("case", "rows", "named"),
        [
            ("not_null", "select cast(null as int) as id, 'x' as name, 5 as amount",
             ["id_not_null", "id : null"]),
            ("check", "select 7 as id, 'x' as name, -5 as amount",
             ["amount_positive", "amount : -5"]),
            ("wrong_type", "select 'seven' as id, 'x' as name, 5 as amount",
             ["CAST_INVALID_INPUT", "'seven'", "column(s) id"]),
        ],
    )  # fmt: skip
    def test_constraint_and_type_violations(self, scratch_project, case, rows, named):
        p = scratch_project
        name = f"bad_{case}"
        self.checked_model(p, name)
        before = versions(p, [name])
        p.model(name, model_sql("unique_key='id'", rows))
        result = p.dbt("run", "-s", name, expect_success=False)
        message = failed_message(result)
        assert name in str(result.result[0].node.unique_id)
        for text in named:
            assert text in message, f"{text!r} not in {message!r}"
        assert versions(p, [name]) == before
        assert p.count(name) == 3
        RELIABILITY["bad inputs rejected"] += 1

    def test_schema_drift_in_a_source_names_the_column(self, scratch_project):
        p = scratch_project
        p.write(
            "models/_sources.yml",
            f"""
version: 2
sources:
  - name: landing
    schema: "{p.schema}"
    tables:
      - name: drifting
""",
        )
        p.spark.sql(f"create schema if not exists `{p.schema}`")
        p.spark.sql(
            f"create or replace table {p.relation('drifting')} (id int, amount int) using delta"
        )
        p.spark.sql(f"insert into {p.relation('drifting')} values (1, 10), (2, 20)")
        p.model(
            "from_drifting",
            model_sql(
                "unique_key='id', on_schema_change='fail'",
                "select id, amount from {{ source('landing', 'drifting') }}",
            ),
        )
        p.dbt("run", "-s", "from_drifting")
        before = versions(p, ["from_drifting"])
        # The source renames a column and changes a type under the model.
        p.spark.sql(
            f"create or replace table {p.relation('drifting')} (id int, amount_eur string) "
            "using delta"
        )
        p.spark.sql(f"insert into {p.relation('drifting')} values (3, 'thirty')")
        result = p.dbt("run", "-s", "from_drifting", expect_success=False)
        message = failed_message(result)
        assert "from_drifting" in result.result[0].node.unique_id
        assert "amount" in message and "amount_eur" in message, message
        assert versions(p, ["from_drifting"]) == before
        assert p.count("from_drifting") == 2
        RELIABILITY["bad inputs rejected"] += 1

    @pytest.mark.parametrize(
        ("csv", "named"),
        [
            # A ragged row: dbt's CSV reader names the seed and the row.
            ("code,amount\na,1\nb,2\nc,3,extra\n", ["bad_seed", "Row 2 has 3 values"]),
            # A value that is not of the column's type (dbt-spark's loader, ANSI off, would
            # load NULL): the adapter checks every value first.
            ("code,amount\na,1\nb,two\n", ["bad_seed", "row 2", "column amount", "'two'"]),
        ],
    )
    def test_malformed_seed_file(self, scratch_project, csv, named):
        p = scratch_project
        p.write("seeds/bad_seed.csv", "code,amount\na,1\nb,2\n")
        p.write(
            "seeds/_seeds.yml",
            """
version: 2
seeds:
  - name: bad_seed
    config:
      column_types: {code: string, amount: int}
""",
        )
        p.dbt("seed", "-s", "bad_seed", "--full-refresh")
        before = versions(p, ["bad_seed"])
        good = p.rows(f"select * from {p.relation('bad_seed')} order by code")
        p.write("seeds/bad_seed.csv", csv)
        result = p.dbt("seed", "-s", "bad_seed", expect_success=False)
        message = failed_message(result) + str(result.exception or "")
        for text in named:
            assert text in message, f"{text!r} not in {message!r}"
        assert versions(p, ["bad_seed"]) == before
        assert p.rows(f"select * from {p.relation('bad_seed')} order by code") == good
        RELIABILITY["bad inputs rejected"] += 1


def run_operation(project: DbtProject, name: str, args: dict) -> tuple[bool, str]:
    """(success, everything dbt said: log lines and the error) of one run-operation."""
    outcome = project.run_operation(name, args)
    return outcome.success, outcome.said


INJECTIONS = [
    ("optimize_tables", {"models": ["guarded; drop table guarded"]}),
    ("optimize_tables", {"schema": "x`; drop table guarded; --"}),
    ("optimize_tables", {"pattern": "guarded' or '1'='1"}),
    ("optimize_tables", {"pattern": "guarded /* comment */"}),
    ("optimize_tables", {"pattern": "guarded", "zorder_by": ["id) -- "]}),
    ("optimize_tables", {"pattern": "guarded", "where": {"p = p or 1=1 /*": "a"}}),
    ("vacuum", {"pattern": "guarded", "retain_hours": "0; drop table guarded"}),
    ("vacuum", {"pattern": "`guarded`"}),
    ("restore", {"table": "guarded`; drop table guarded", "version": 0}),
    ("restore", {"table": "t; drop table x", "version": 0}),
    ("restore", {"table": "guarded", "version": "0; drop table guarded"}),
    ("restore", {"table": "guarded -- ", "version": 0}),
    ("clone", {"source": "guarded", "target": "x; drop table guarded"}),
    ("clone", {"source": "guarded", "target": "y", "timestamp": "2026' --"}),
    ("clone", {"source": 'guarded"; drop table guarded', "target": "y"}),
    ("drop_table_feature", {"feature": "x; drop table guarded", "pattern": "*"}),
    ("enable_table_feature", {"feature": "v2Checkpoint'); drop table guarded; --", "pattern": "*"}),
]


@pytest.fixture(scope="class")
def guarded(dbt_project):
    """A Delta table with history, a rewritten version and a table feature, in the schema of
    the project whose operations are tried on it."""
    p = dbt_project
    p.spark.sql(f"create schema if not exists `{p.schema}`")
    table = p.relation("guarded")
    p.spark.sql(f"create or replace table {table} (id int, p string) using delta")
    for batch in range(3):
        p.spark.sql(f"insert into {table} values ({batch}, 'a'), ({batch + 10}, 'b')")
    p.spark.sql(f"insert overwrite {table} values (100, 'a')")
    p.spark.sql(
        f"alter table {table} set tblproperties ('delta.feature.v2Checkpoint' = 'supported')"
    )
    p.spark.sql(f"create or replace table {p.relation('guarded_copy')} (id int) using delta")
    p.spark.sql(f"insert into {p.relation('guarded_copy')} values (1)")
    return p


@pytest.mark.slow
class TestDangerousOperations:
    def state(self, p) -> tuple:
        detail = p.detail("guarded")
        return (p.history("guarded")[0].version, p.count("guarded"), detail.numFiles,
                tuple(detail.tableFeatures), p.count("guarded_copy"))  # fmt: skip

    @pytest.mark.parametrize(
        ("name", "args", "refused", "says"),
        [
            # VACUUM below the retention: refused outright without the override.
            ("vacuum", {"pattern": "guarded", "retain_hours": 0, "dry_run": False}, True,
             ["delta.deletedFileRetentionDuration"]),
            # VACUUM, RESTORE, DROP FEATURE: dry runs that say what they would do.
            ("vacuum", {"pattern": "guarded", "retain_hours": 0,
                        "unsafe_allow_short_retention": True}, False, ["would delete"]),
            ("restore", {"table": "guarded", "version": 1}, False,
             ["would be undone", "confirm: true"]),
            ("drop_table_feature", {"feature": "v2Checkpoint", "pattern": "guarded"}, False,
             ["would run", "DROP FEATURE"]),
            # Clone over an existing table: refused without replace: true.
            ("clone", {"source": "guarded", "target": "guarded_copy"}, True,
             ["replace: true would"]),
        ],
    )  # fmt: skip
    def test_refused_or_dry_run_without_the_explicit_argument(
        self, guarded, name, args, refused, says
    ):
        before = self.state(guarded)
        success, said = run_operation(guarded, name, args)
        assert success is not refused, said
        for text in says:
            assert text.lower() in said.lower(), f"{text!r} not in {said!r}"
        assert self.state(guarded) == before, f"{name} changed the table without the argument"
        RELIABILITY["dangerous operations guarded"] += 1

    @pytest.mark.parametrize(("name", "args"), INJECTIONS)
    def test_injection_attempts_are_rejected(self, guarded, name, args):
        before = self.state(guarded)
        success, said = run_operation(guarded, name, args)
        assert not success, said
        assert "Invalid" in said, said
        assert self.state(guarded) == before
        RELIABILITY["injection attempts rejected"] += 1


class TestOperationGuards:
    """No operation destroys data it was not asked to, and every refusal names the argument
    and what to do."""

    @pytest.mark.parametrize(
        ("chain", "says"),
        [
            ([], ["the target itself"]),
            (["guarded_clone"], ["a clone of the target", "guarded_clone cloned from"]),
            (
                ["guarded_clone", "guarded_clone_of_clone"],
                [
                    "a clone of the target",
                    "guarded_clone_of_clone cloned from",
                    "guarded_clone cloned from",
                ],
            ),
        ],
    )
    def test_clone_refuses_to_replace_a_table_by_itself_or_its_own_clones(
        self, guarded, chain, says
    ):
        p = guarded
        source = "guarded"
        for clone in chain:  # each a clone of the one before
            p.spark.sql(f"drop table if exists {p.relation(clone)}")
            success, said = run_operation(p, "clone", {"source": source, "target": clone})
            assert success, said
            source = clone
        rows = p.rows(f"select * from {p.relation('guarded')} order by id")
        version = p.history("guarded")[0].version
        success, said = run_operation(
            p, "clone", {"source": source, "target": "guarded", "replace": True}
        )
        assert not success and "restore" in said, said
        assert all(text in said for text in says), said
        assert p.rows(f"select * from {p.relation('guarded')} order by id") == rows
        assert p.history("guarded")[0].version == version, "the target was changed"
        RELIABILITY["dangerous operations guarded"] += 1

    def test_clone_replaces_an_unrelated_table(self, guarded):
        p = guarded
        p.spark.sql(f"create or replace table {p.relation('replaced')} (id int) using delta")
        p.spark.sql(f"insert into {p.relation('replaced')} values (7)")
        success, said = run_operation(
            p, "clone", {"source": "guarded", "target": "replaced", "replace": True}
        )
        assert success, said
        assert p.rows(f"select id from {p.relation('replaced')}") == p.rows(
            f"select id from {p.relation('guarded')}"
        )

    @pytest.mark.parametrize(
        ("name", "args", "says"),
        [
            ("restore", {"table": "guarded", "timestamp": "2026-13-45"},
             ['Invalid restore', 'timestamp "2026-13-45"', "not a date"]),
            ("restore", {"table": "guarded", "timestamp": "2999-01-01"},
             ["after its latest commit", "nothing to restore"]),
            ("restore", {"table": "guarded", "timestamp": "2001-01-01"},
             ["before its oldest version"]),
            ("restore", {"table": "guarded", "version": 1.5},
             ['Invalid restore', 'version "1.5"', "whole number"]),
            ("restore", {"table": "guarded", "version": 99}, ["version 99 is not in its history"]),
            ("history", {"pattern": "guarded", "limit": 1.5},
             ['Invalid history limit "1.5"', "whole number"]),
            ("history", {"pattern": "guarded", "limit": True}, ['Invalid history limit "True"']),
            ("optimize_tables", {"pattern": "guarded", "where": {"p": {"a": 1}}},
             ["Invalid optimize where value for p"]),
            ("optimize_tables", {"tags": ["no_such_tag"]}, ["has the tag no_such_tag"]),
        ],
    )  # fmt: skip
    def test_bad_arguments_are_named(self, guarded, name, args, says):
        version = guarded.history("guarded")[0].version
        success, said = run_operation(guarded, name, args)
        assert not success, said
        for text in says:
            assert text in said, f"{text!r} not in {said!r}"
        assert "VACUUM" not in said and "Runtime Error Runtime Error" not in said, said
        assert guarded.history("guarded")[0].version == version
        RELIABILITY["bad inputs rejected"] += 1

    def test_optimize_where_null_compacts_the_null_partition(self, guarded):
        p = guarded
        table = p.relation("by_day")
        p.spark.sql(f"create or replace table {table} (id int, day string) using delta "
                    "partitioned by (day)")  # fmt: skip
        for i in range(3):
            p.spark.sql(f"insert into {table} values ({i}, null), ({i}, 'd1')")
        success, said = run_operation(
            p, "optimize_tables", {"pattern": "by_day", "where": {"day": None}}
        )
        assert success, said
        optimize = p.history("by_day")[0]
        assert optimize.operation == "OPTIMIZE"
        assert "isnull('day)" in optimize.operationParameters["predicate"]
        files = p.rows(f"select day, count(distinct _metadata.file_path) as n from {table} "
                       "group by day order by day")  # fmt: skip
        assert [(r.day, r.n) for r in files] == [(None, 1), ("d1", 3)]

    def test_optimize_selects_tables_by_tag(self, guarded):
        success, said = run_operation(guarded, "optimize_tables", {"tags": ["silver"]})
        assert success, said
        for model in ("int_orders_deduplicated", "int_order_lines_deduplicated"):
            assert f"{guarded.schema}.{model}" in said, said
