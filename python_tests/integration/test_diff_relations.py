"""`diff_relations`: a keyed data diff of two relations, or of a table with an earlier Delta
version of itself. Its counts, per-column counts and sample keys are checked against a
recompute in Python on small tables with known differences."""

from __future__ import annotations

import json
import re
from decimal import Decimal

import pytest

COLUMNS = "id int, region string, name string, amount decimal(10,2), score double, note string"
# (id, region) is the key; NULL is a key value like any other.
ROWS_A = [
    "(1, 'eu', 'ann', 10.00, 1.0, 'x')",  # unchanged
    "(1, 'us', 'ann', 10.00, 1.0, 'x')",  # same id, other region: a composite key
    "(2, 'eu', 'bob', 20.00, 2.0, null)",  # note NULL -> 'y'
    "(3, 'eu', 'cy', 30.00, 3.0, null)",  # NULL vs NULL: unchanged
    "(4, 'eu', 'dee', 40.00, 4.0, '')",  # '' vs NULL
    "(5, 'eu', 'eve', 50.00, 5.0, 'NULL')",  # 'NULL' vs NULL
    "(6, 'eu', 'O''Brien', 60.00, 6.0, 'q')",  # a quote, changed
    "(7, 'eu', 'O''Hara', 70.00, 7.0, 'q')",  # a quote, unchanged
    "(8, 'eu', 'fay', 80.00, 8.00, 'r')",  # score within 0.1
    "(9, 'eu', 'gus', 90.00, 9.0, 'r')",  # amount over 0.1
    "(10, 'eu', 'hal', 100.00, 10.0, 's')",  # only in a
    "(11, 'eu', 'ida', 110.00, 11.0, 's')",  # only in a
    "(null, 'eu', 'nul', 0.00, 0.0, 'n')",  # a NULL key part, changed name
]
ROWS_B = [
    "(1, 'eu', 'ann', 10.00, 1.0, 'x')",
    "(1, 'us', 'ANN', 10.00, 1.0, 'x')",
    "(2, 'eu', 'bob', 20.00, 2.0, 'y')",
    "(3, 'eu', 'cy', 30.00, 3.0, null)",
    "(4, 'eu', 'dee', 40.00, 4.0, null)",
    "(5, 'eu', 'eve', 50.00, 5.0, null)",
    "(6, 'eu', 'O''Brian', 60.00, 6.0, 'q')",
    "(7, 'eu', 'O''Hara', 70.00, 7.0, 'q')",
    "(8, 'eu', 'fay', 80.00, 8.05, 'r')",
    "(9, 'eu', 'gus', 90.50, 9.0, 'r')",
    "(12, 'eu', 'jo', 120.00, 12.0, 't')",  # only in b
    "(null, 'eu', 'NUL', 0.00, 0.0, 'n')",
]
KEY = ("id", "region")
COMPARED = ("name", "amount", "score", "note")
NUMERIC = ("amount", "score")


def diff_result(outcome) -> dict:
    """The result the operation returned, from the JSON line it logs for scripts."""
    assert outcome.success, outcome.said
    [line] = re.findall(r"^diff_relations result: (.*)$", outcome.log, re.MULTILINE)
    return json.loads(line)


def table_rows(p, name: str) -> dict:
    rows = p.rows(f"select * from {p.relation(name)}")
    return {tuple(r[k] for k in KEY): r.asDict() for r in rows}


def equal(x, y, column: str, tolerance: float | None) -> bool:
    if x is None or y is None:
        return x is None and y is None
    if tolerance is not None and column in NUMERIC:
        return abs(Decimal(str(x)) - Decimal(str(y))) <= Decimal(str(tolerance))
    return x == y


def recompute(a: dict, b: dict, tolerance: float | None = None) -> dict:
    """The diff, computed in Python from the rows of both sides."""
    both = a.keys() & b.keys()
    changed_columns = {
        k: [c for c in COMPARED if not equal(a[k][c], b[k][c], c, tolerance)] for k in both
    }
    return {
        "removed": sorted(a.keys() - b.keys(), key=repr),
        "added": sorted(b.keys() - a.keys(), key=repr),
        "changed": {k: cs for k, cs in changed_columns.items() if cs},
        "unchanged": [k for k, cs in changed_columns.items() if not cs],
        "column_changes": {c: sum(c in cs for cs in changed_columns.values()) for c in COMPARED},
    }


def sample_key(sample: dict) -> tuple:
    return tuple(sample["key"][k] for k in KEY)


@pytest.fixture(scope="class")
def tables(dbt_project):
    p = dbt_project
    p.spark.sql(f"create schema if not exists `{p.schema}`")
    for name, rows, extra in (("diff_a", ROWS_A, "only_a"), ("diff_b", ROWS_B, "only_b")):
        p.spark.sql(f"create or replace table {p.relation(name)} ({COLUMNS}) using delta")
        p.spark.sql(f"insert into {p.relation(name)} values {', '.join(rows)}")
        p.spark.sql(f"alter table {p.relation(name)} add columns ({extra} string)")
    return p


def diff_args(p, **more) -> dict:
    return {"a": f"{p.schema}.diff_a", "b": f"{p.schema}.diff_b", "key": list(KEY), **more}


class TestDiffRelations:
    @pytest.mark.parametrize("tolerance", [None, 0.1])
    def test_counts_match_a_recompute(self, tables, tolerance):
        p = tables
        result = diff_result(p.run_operation("diff_relations", diff_args(p, tolerance=tolerance)))
        expected = recompute(table_rows(p, "diff_a"), table_rows(p, "diff_b"), tolerance)
        assert result["rows_a"] == len(ROWS_A) and result["rows_b"] == len(ROWS_B)
        assert result["removed"] == len(expected["removed"]) == 2
        assert result["added"] == len(expected["added"]) == 1
        assert result["changed"] == len(expected["changed"])
        assert result["unchanged"] == len(expected["unchanged"])
        assert result["column_changes"] == expected["column_changes"]
        assert result["columns_removed"] == ["only_a"]
        assert result["columns_added"] == ["only_b"]
        assert result["differs"] is True
        # The cases the tables were made for: NULL vs '' and vs 'NULL' differ, NULL vs NULL
        # does not, the score is within 0.1 and the amount is not.
        assert {(2, "eu"), (4, "eu"), (5, "eu")} <= expected["changed"].keys()
        assert (3, "eu") in expected["unchanged"]
        assert ((8, "eu") in expected["changed"]) == (tolerance is None)
        assert expected["changed"][(9, "eu")] == ["amount"]

    def test_samples_are_keys_of_their_kind_with_the_changed_columns(self, tables):
        p = tables
        result = diff_result(p.run_operation("diff_relations", diff_args(p, samples=3)))
        expected = recompute(table_rows(p, "diff_a"), table_rows(p, "diff_b"))
        samples = result["samples"]
        assert [sample_key(s) for s in samples["removed"]] == expected["removed"]
        assert [sample_key(s) for s in samples["added"]] == expected["added"]
        assert len(samples["changed"]) == 3
        for sample in samples["changed"]:
            assert sample["columns"] == expected["changed"][sample_key(sample)]
        # The smallest keys come first; a NULL key stays NULL (sorted first).
        assert sample_key(samples["changed"][0]) == (None, "eu")

    def test_a_table_against_itself_is_identical_and_fail_on_diff_passes(self, tables):
        p = tables
        args = {"a": f"{p.schema}.diff_a", "b": f"{p.schema}.diff_a", "key": list(KEY)}
        result = diff_result(p.run_operation("diff_relations", {**args, "fail_on_diff": True}))
        assert result["differs"] is False and result["unchanged"] == len(ROWS_A)
        assert result["changed"] == result["removed"] == result["added"] == 0
        assert result["summary"] == "identical"

    def test_fail_on_diff_fails_when_something_differs(self, tables):
        p = tables
        outcome = p.run_operation("diff_relations", diff_args(p, fail_on_diff=True))
        assert not outcome.success
        # A data difference, said as one line, not a compilation error.
        assert "data differs: 2 removed, 1 added, 8 changed; columns removed: only_a; " in (
            outcome.error
        ) and "columns added: only_b" in outcome.error, outcome.said
        assert "fail_on_diff is set" in outcome.error and "Compilation Error" not in outcome.error

    def test_a_subset_of_columns_is_compared(self, tables):
        p = tables
        result = diff_result(p.run_operation("diff_relations", diff_args(p, columns=["amount"])))
        expected = recompute(table_rows(p, "diff_a"), table_rows(p, "diff_b"))
        assert result["columns"] == ["amount"]
        assert result["changed"] == expected["column_changes"]["amount"] == 1

    def test_duplicated_keys_are_refused_naming_them_and_the_side(self, tables):
        p = tables
        p.spark.sql(f"create or replace table {p.relation('diff_dup')} ({COLUMNS}) using delta")
        p.spark.sql(
            f"insert into {p.relation('diff_dup')} values {', '.join(ROWS_B)}, "
            "(2, 'eu', 'twin', 1.00, 1.0, null), (null, 'eu', 'twin', 1.00, 1.0, null)"
        )
        args = {"a": f"{p.schema}.diff_a", "b": f"{p.schema}.diff_dup", "key": list(KEY)}
        outcome = p.run_operation("diff_relations", args)
        assert not outcome.success
        assert "not unique in b" in outcome.error and "2 duplicated keys" in outcome.error
        assert '(id=2, region="eu")' in outcome.error
        assert '(id=NULL, region="eu")' in outcome.error, outcome.error

    def test_a_version_of_the_same_table_reports_exactly_the_updated_rows(self, tables):
        p = tables
        name = p.relation("diff_versions")
        p.spark.sql(
            f"create or replace table {name} using delta as select * from {p.relation('diff_a')}"
        )
        before = p.history("diff_versions")[0].version
        where = "id in (2, 7) or id is null"
        p.spark.sql(f"update {name} set score = score + 1 where {where}")
        updated = {(r.id, r.region) for r in p.rows(f"select id, region from {name} where {where}")}
        args = {"a": f"{p.schema}.diff_versions", "version": before, "key": list(KEY)}
        result = diff_result(p.run_operation("diff_relations", args))
        # The earlier version is before (a), the table now after (b).
        assert result["a"].endswith(f"version as of {before}")
        assert result["b"] == f"{p.schema}.diff_versions"
        assert result["changed"] == len(updated) == 3
        assert result["removed"] == result["added"] == 0
        assert result["unchanged"] == len(ROWS_A) - 3
        assert {c: n for c, n in result["column_changes"].items() if n} == {"score": 3}
        assert {sample_key(s) for s in result["samples"]["changed"]} == updated

    @pytest.mark.parametrize(
        "args, named",
        [
            ({"samples": -1}, "samples"),
            ({"fail_on_diff": "yes"}, "fail_on_diff"),
            ({"tolerance": "a bit"}, "tolerance"),
            ({"key": ["id; drop"]}, "key column"),
            ({"key": ["id", "nope"]}, "key column nope"),
            ({"columns": ["nope"]}, "column nope"),
            ({"version": "last"}, "version"),
            ({"b": "no_such_schema_x.diff_b"}, "b (no_such_schema_x.diff_b) does not exist"),
            ({"b": "a.b.c"}, "invalid b"),
            ({"sample_order": "newest"}, "invalid sample_order"),
            ({"seed": -3}, "invalid seed"),
            ({"version_b": 1}, "invalid version_b with b"),
            ({"save_to": "diff_saved"}, "schema of a"),
            ({"save_to": "x.y.z"}, "invalid save_to"),
        ],
    )
    def test_a_bad_argument_is_refused_naming_it(self, tables, args, named):
        p = tables
        outcome = p.run_operation("diff_relations", diff_args(p, **args))
        assert not outcome.success
        assert named in outcome.error, outcome.error
        assert "Compilation Error" not in outcome.error, outcome.error

    def test_no_key_is_an_error_naming_the_options(self, tables):
        p = tables
        args = {"a": f"{p.schema}.diff_a", "b": f"{p.schema}.diff_b"}
        outcome = p.run_operation("diff_relations", args)
        assert not outcome.success
        assert "give key" in outcome.error and "unique_key" in outcome.error
        assert "primary_key" in outcome.error and "unique test" in outcome.error, outcome.error

    def test_a_model_name_takes_its_relation_and_its_unique_key(self, tables):
        p = tables
        # int_orders_deduplicated has unique_key='order_id'; its relation is in p.schema.
        for name, status in (("int_orders_deduplicated", "'shipped'"), ("orders_prod", "'open'")):
            p.spark.sql(
                f"create or replace table {p.relation(name)} using delta as "
                f"select id as order_id, case when id = 2 then {status} else 'open' end as status "
                "from range(1, 5) as r(id)"
            )
        args = {"a": "int_orders_deduplicated", "b": f"{p.schema}.orders_prod"}
        result = diff_result(p.run_operation("diff_relations", args))
        assert result["a"] == f"{p.schema}.int_orders_deduplicated"
        assert result["key"] == ["order_id"]
        assert (result["changed"], result["unchanged"]) == (1, 3)
        assert [s["key"] for s in result["samples"]["changed"]] == [{"order_id": 2}]
