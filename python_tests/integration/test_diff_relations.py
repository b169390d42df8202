"""`diff_relations`: a keyed data diff of two relations, or of a table with an earlier Delta
version of itself. Its counts, per-column breakdown, totals and samples are checked against a
recompute in Python on small tables with known differences."""

from __future__ import annotations

import json
import re
from decimal import Decimal

import pytest

from lakehouse.cli import main as lakehouse
from lakehouse.dbt_runner import copy_project, environment

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
    "(10, 'eu', 'hal', 100.00, 10.0, 's')",  # removed (in a only)
    "(11, 'eu', 'ida', 110.00, 11.0, 's')",  # removed (in a only)
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
    "(12, 'eu', 'jo', 120.00, 12.0, 't')",  # added (in b only)
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
        assert (
            "data differs: 2 removed, 1 added, 8 changed; columns removed: only_a; "
            in (outcome.error)
            and "columns added: only_b" in outcome.error
        ), outcome.said
        assert "fail_on_diff is set" in outcome.error and "Compilation Error" not in outcome.error

    def test_a_subset_of_columns_is_compared(self, tables):
        p = tables
        result = diff_result(p.run_operation("diff_relations", diff_args(p, columns=["amount"])))
        expected = recompute(table_rows(p, "diff_a"), table_rows(p, "diff_b"))
        assert result["columns"] == ["amount"]
        assert result["changed"] == expected["column_changes"]["amount"] == 1

    def test_a_key_of_another_type_in_b_matches_as_spark_compares_it(self, tables):
        """b's id as a decimal (a's is an int): the rows match as with a's own types."""
        p = tables
        columns = ", ".join(["cast(id as decimal(12, 2)) as id", "region", *COMPARED])
        p.spark.sql(
            f"create or replace table {p.relation('diff_b_decimal')} using delta "
            f"as select {columns} from {p.relation('diff_b')}"
        )
        compared = {"columns": list(COMPARED)}
        same_types = diff_result(p.run_operation("diff_relations", diff_args(p, **compared)))
        args = diff_args(p, b=f"{p.schema}.diff_b_decimal", **compared)
        mixed = diff_result(p.run_operation("diff_relations", args))
        counts = ("rows_a", "rows_b", "removed", "added", "changed", "unchanged", "column_changes")
        assert {c: mixed[c] for c in counts} == {c: same_types[c] for c in counts}
        assert mixed["changed"] > 0 and mixed["removed"] > 0, mixed

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

    def test_a_key_repeated_on_both_sides_is_refused_naming_a(self, tables):
        # region alone repeats on both sides: a join on it would multiply the rows, so the
        # key's uniqueness is checked on each side (a first) before the join runs.
        p = tables
        args = {"a": f"{p.schema}.diff_a", "b": f"{p.schema}.diff_b", "key": ["region"]}
        outcome = p.run_operation("diff_relations", args)
        assert not outcome.success
        repeated = p.rows(
            f"select count(*) as n from (select region from {p.relation('diff_a')} "
            "group by region having count(*) > 1)"
        )[0].n
        assert f"not unique in a ({p.schema}.diff_a): {repeated} duplicated key" in outcome.error

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


def as_text(value) -> str | None:
    """A value as Spark casts it to text (how samples show before and after values)."""
    return None if value is None else str(value)


def breakdown(a: dict, b: dict, tolerance: float | None = None) -> dict:
    """dbt-audit-helper's per-column breakdown over the keys in both sides, recomputed."""
    both = a.keys() & b.keys()
    found = {}
    for c in COMPARED:
        both_null = sum(a[k][c] is None and b[k][c] is None for k in both)
        one_null = sum((a[k][c] is None) != (b[k][c] is None) for k in both)
        differ = sum(
            a[k][c] is not None
            and b[k][c] is not None
            and not equal(a[k][c], b[k][c], c, tolerance)
            for k in both
        )
        found[c] = {
            "changed": one_null + differ,
            "share": round(100.0 * (one_null + differ) / len(both), 2),
            "match": len(both) - both_null - one_null - differ,
            "both_null": both_null,
            "one_null": one_null,
            "differ": differ,
        }
    return found


class TestDiffBeyondCounts:
    """Per-column shares and breakdown, totals, before/after samples, random samples, a new
    relation, save_to, two versions of one table, and the `lakehouse dev diff` command."""

    @pytest.mark.parametrize("tolerance", [None, 0.1])
    def test_per_column_breakdown_and_share_match_a_recompute(self, tables, tolerance):
        p = tables
        result = diff_result(p.run_operation("diff_relations", diff_args(p, tolerance=tolerance)))
        a, b = table_rows(p, "diff_a"), table_rows(p, "diff_b")
        assert result["column_stats"] == breakdown(a, b, tolerance)
        # The cases: note NULL -> 'y' and '' / 'NULL' -> NULL are "one NULL", (3, eu) both NULL.
        assert result["column_stats"]["note"]["one_null"] == 3
        assert result["column_stats"]["note"]["both_null"] == 1
        for c, stats in result["column_stats"].items():
            assert stats["changed"] == result["column_changes"][c]
            assert sum(stats[k] for k in ("match", "both_null", "one_null", "differ")) == (
                result["changed"] + result["unchanged"]
            )

    def test_numeric_totals_of_each_side(self, tables):
        p = tables
        result = diff_result(p.run_operation("diff_relations", diff_args(p, samples=0)))
        a, b = table_rows(p, "diff_a"), table_rows(p, "diff_b")
        assert set(result["totals"]) == set(NUMERIC)
        amount = result["totals"]["amount"]
        assert Decimal(amount["a"]) == sum(r["amount"] for r in a.values())
        assert Decimal(amount["b"]) == sum(r["amount"] for r in b.values())
        assert Decimal(amount["difference"]) == Decimal(amount["b"]) - Decimal(amount["a"])
        score = result["totals"]["score"]
        assert float(score["a"]) == pytest.approx(sum(r["score"] for r in a.values()))
        assert float(score["b"]) == pytest.approx(sum(r["score"] for r in b.values()))

    def test_changed_samples_show_before_and_after_values(self, tables):
        p = tables
        result = diff_result(p.run_operation("diff_relations", diff_args(p, samples=20)))
        a, b = table_rows(p, "diff_a"), table_rows(p, "diff_b")
        expected = recompute(a, b)
        assert len(result["samples"]["changed"]) == len(expected["changed"])
        for sample in result["samples"]["changed"]:
            k = sample_key(sample)
            assert sample["values"] == [
                {"column": c, "a": as_text(a[k][c]), "b": as_text(b[k][c])}
                for c in expected["changed"][k]
            ]
        by_key = {sample_key(s): s["values"] for s in result["samples"]["changed"]}
        assert by_key[(2, "eu")] == [{"column": "note", "a": None, "b": "y"}]
        assert by_key[(4, "eu")] == [{"column": "note", "a": "", "b": None}]
        assert by_key[(9, "eu")] == [{"column": "amount", "a": "90.00", "b": "90.50"}]

    def test_random_samples_are_seeded_and_of_their_kind(self, tables):
        p = tables
        expected = recompute(table_rows(p, "diff_a"), table_rows(p, "diff_b"))

        def changed_keys(**options) -> list:
            args = diff_args(p, samples=2, **options)
            result = diff_result(p.run_operation("diff_relations", args))
            assert result["sample_order"] == options.get("sample_order", "key")
            return [sample_key(s) for s in result["samples"]["changed"]]

        smallest = changed_keys()
        first = changed_keys(sample_order="random", seed=1)
        assert first == changed_keys(sample_order="random", seed=1)  # the same seed, same rows
        second = changed_keys(sample_order="random", seed=2)
        for keys in (first, second):
            assert len(keys) == 2 and set(keys) <= expected["changed"].keys()
        assert smallest == sorted(expected["changed"], key=lambda k: (k[0] is not None, k))[:2]
        assert {tuple(first), tuple(second)} != {tuple(smallest)}

    def test_a_new_relation_is_summarised(self, tables):
        p = tables
        p.spark.sql(f"create or replace table {p.relation('diff_new_dup')} ({COLUMNS}) using delta")
        p.spark.sql(
            f"insert into {p.relation('diff_new_dup')} values {', '.join(ROWS_B)}, "
            "(2, 'eu', 'twin', 1.00, 1.0, null), (2, 'eu', 'twin', 1.00, 1.0, null)"
        )
        args = {"a": f"{p.schema}.diff_not_in_production", "b": f"{p.schema}.diff_b"}
        result = diff_result(p.run_operation("diff_relations", {**args, "key": list(KEY)}))
        assert result["new_relation"] is True and result["differs"] is True
        assert (result["rows_a"], result["rows_b"], result["added"]) == (
            0,
            len(ROWS_B),
            len(ROWS_B),
        )
        assert result["key"] == list(KEY) and result["key_unique"] is True
        assert result["columns_added"] == [
            "id",
            "region",
            "name",
            "amount",
            "score",
            "note",
            "only_b",
        ]
        assert result["summary"] == (
            f"data differs: a ({p.schema}.diff_not_in_production) does not exist; b "
            f"({p.schema}.diff_b) is new: {len(ROWS_B)} rows, 7 columns, key (id, region) unique"
        )
        # No key known: no key error, the rows and columns alone.
        unkeyed = diff_result(p.run_operation("diff_relations", args))
        assert unkeyed["key"] == [] and unkeyed["key_unique"] is None
        assert unkeyed["summary"].endswith("7 columns, no key known")
        duplicated = {**args, "b": f"{p.schema}.diff_new_dup", "key": list(KEY)}
        result = diff_result(p.run_operation("diff_relations", duplicated))
        assert result["key_unique"] is False and result["duplicated_rows"] == 2
        failed = p.run_operation("diff_relations", {**args, "fail_on_diff": True})
        assert not failed.success and "does not exist; b" in failed.error
        assert "Compilation Error" not in failed.error, failed.error

    def test_save_to_writes_the_rows_that_differ_outside_as_schema(self, tables):
        p = tables
        other = f"{p.schema}_diffs"
        p.spark.sql(f"create schema if not exists `{other}`")
        try:
            saved = f"{other}.diff_saved"
            result = diff_result(p.run_operation("diff_relations", diff_args(p, save_to=saved)))
            assert result["saved_to"] == saved
            expected = recompute(table_rows(p, "diff_a"), table_rows(p, "diff_b"))
            rows = {(r.id, r.region): r for r in p.rows(f"select * from `{other}`.diff_saved")}
            kinds = {k: r._diff_kind for k, r in rows.items()}
            assert kinds == {
                **{k: "removed" for k in expected["removed"]},
                **{k: "added" for k in expected["added"]},
                **{k: "changed" for k in expected["changed"]},
            }
            for k, columns in expected["changed"].items():
                assert list(rows[k]._diff_columns) == columns
            assert (rows[(4, "eu")].note__a, rows[(4, "eu")].note__b) == ("", None)
            assert (rows[(10, "eu")].amount__a, rows[(10, "eu")].amount__b) == (
                Decimal("100.00"),
                None,
            )
            columns = p.spark.table(f"`{other}`.diff_saved").columns
            assert columns[:4] == ["id", "region", "_diff_kind", "_diff_columns"]
            assert columns[4:6] == ["name__a", "name__b"]
            properties = p.rows(f"show tblproperties `{other}`.diff_saved")
            assert any(r.key == "delta_ops.diff_relations" for r in properties)
            # A second diff replaces its own earlier table ...
            again = diff_args(p, save_to=saved, columns=["amount"])
            assert diff_result(p.run_operation("diff_relations", again))["saved_to"] == saved
            assert len(p.rows(f"select * from `{other}`.diff_saved")) == 4  # 2 + 1 + 1 changed
            # ... never a table it did not write, nor anything in a's schema.
            p.spark.sql(f"create table `{other}`.not_a_diff (id int) using delta")
            refused = p.run_operation("diff_relations", diff_args(p, save_to=f"{other}.not_a_diff"))
            assert not refused.success and "diff_relations did not write it" in refused.error
            refused = p.run_operation("diff_relations", diff_args(p, save_to=f"{p.schema}.x"))
            assert not refused.success and "schema of a" in refused.error
            assert not p.spark.catalog.tableExists(f"{p.schema}.x")
        finally:
            p.spark.sql(f"drop schema if exists `{other}` cascade")

    def test_two_versions_of_one_table(self, tables):
        p = tables
        name = p.relation("diff_vv")
        p.spark.sql(
            f"create or replace table {name} using delta as select * from {p.relation('diff_a')}"
        )
        v0 = p.history("diff_vv")[0].version
        p.spark.sql(f"update {name} set score = score + 1 where id = 2")
        p.spark.sql(f"delete from {name} where id = 3")
        v2 = p.history("diff_vv")[0].version
        p.spark.sql(f"insert into {name} select 99, 'eu', 'new', 1.00, 1.0, 'n', null")
        v3 = p.history("diff_vv")[0].version
        table = {"a": f"{p.schema}.diff_vv", "key": list(KEY)}

        def counts(**versions) -> tuple:
            r = diff_result(p.run_operation("diff_relations", {**table, **versions}))
            return r["removed"], r["added"], r["changed"], r["a"], r["b"]

        assert counts(version=v2, version_b=v3) == (
            0, 1, 0,
            f"{p.schema}.diff_vv version as of {v2}",
            f"{p.schema}.diff_vv version as of {v3}",
        )  # fmt: skip
        assert counts(version=v0, version_b=v2)[:3] == (1, 0, 1)
        assert counts(version=v0)[:3] == (1, 1, 1)  # v0 (before) with the table now (after)
        refused = p.run_operation("diff_relations", {**table, "version_b": v2})
        assert not refused.success and "as well as version_b" in refused.error, refused.error


@pytest.fixture
def cli_schemas(tables, tmp_path):
    """Production and development schemas of one table each, and a copy of the project."""
    p = tables
    prod, dev = f"{p.schema}_prod", f"{p.schema}_dev"
    for schema, source in ((prod, "diff_a"), (dev, "diff_b")):
        p.spark.sql(f"create schema if not exists `{schema}`")
        p.spark.sql(
            f"create or replace table `{schema}`.orders_x using delta as "
            f"select id, name, amount from {p.relation(source)} where region = 'eu'"
        )
    p.spark.sql(f"create or replace table `{dev}`.brand_new using delta as select 1 as id")
    project = copy_project(tmp_path / "project")
    env = {"LAKEHOUSE_SCHEMA": prod, "LAKEHOUSE_DEV_SCHEMA": dev}
    try:
        with environment(env):
            yield project, prod, dev
    finally:
        for schema in (prod, dev):
            p.spark.sql(f"drop schema if exists `{schema}` cascade")


def test_lakehouse_dev_diff_says_what_differs_in_its_own_words(cli_schemas, capsys):
    project, prod, dev = cli_schemas
    diff = ["--project-dir", str(project), "dev", "diff"]

    assert lakehouse([*diff, "orders_x", "--key", "id", "--fail-on-diff"]) == 1
    said = capsys.readouterr()
    # orders_x: ids 10, 11 removed, 12 added; names of 6 and NULL and the amount of 9 changed.
    assert "data differs: 2 removed, 1 added, 3 changed (--fail-on-diff: exit 1)" in said.err
    assert "removed:" in said.out and "diff_relations result:" not in said.out
    assert "Compilation Error" not in said.out + said.err

    assert lakehouse([*diff, "orders_x", "--key", "nope"]) == 2
    said = capsys.readouterr()
    assert "error: diff_relations: key column nope is not a column of a" in said.err
    assert "Give --key." in said.err and "Compilation Error" not in said.err

    assert lakehouse([*diff, "orders_x"]) == 2  # a table of no model: no key known
    said = capsys.readouterr()
    assert "give --key, or give the model a unique_key config" in said.err, said.err

    assert lakehouse([*diff, "orders_x", "--key", "id", "--sample-order", "random"]) == 0
    assert "random, seed 0" in capsys.readouterr().out

    # A model production does not have: summarised, not a key error.
    assert lakehouse([*diff, "brand_new", "--fail-on-diff"]) == 1
    said = capsys.readouterr()
    assert f"a ({prod}.brand_new) does not exist; b ({dev}.brand_new) is new: 1 row" in said.err
    assert "a does not exist: b is a new relation" in said.out

    # Two versions of production's table.
    assert lakehouse([*diff, "orders_x", "--key", "id", "--version", "0"]) == 0
    assert "identical" in capsys.readouterr().out
    assert lakehouse([*diff, "orders_x", "--version-b", "0"]) == 2
    assert "--version-b compares two versions" in capsys.readouterr().err

    # The dry-run drop names the flag that drops.
    assert lakehouse(["--project-dir", str(project), "dev", "drop"]) == 0
    said = capsys.readouterr()
    assert "Run `lakehouse dev drop --yes` to drop it." in said.out
    assert "dry_run" not in said.out
