"""`clone` with `replace: true` validates everything before it touches the target, and a clone
that fails after emptying the target gives the target back: a failure leaves it as it was."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="class")
def tables(dbt_project):
    p = dbt_project
    p.spark.sql(f"create schema if not exists `{p.schema}`")
    for name, ids in (("clone_source", "1, 2, 3"), ("clone_target", "7, 8")):
        p.spark.sql(f"create or replace table {p.relation(name)} (id int) using delta")
        p.spark.sql(f"insert into {p.relation(name)} values ({'), ('.join(ids.split(', '))})")
    return p


def state(p, name: str) -> tuple:
    rows = p.rows(f"select id from {p.relation(name)} order by id")
    return [row.id for row in rows], p.history(name)[0].version


class TestCloneLeavesTheTargetAsItWas:
    @pytest.mark.parametrize(
        "as_of",
        [{"version": 9999}, {"timestamp": "2001-01-01"}],
    )
    def test_an_unreadable_version_is_refused_before_any_write(self, tables, as_of):
        p = tables
        before = state(p, "clone_target")
        args = {"source": "clone_source", "target": "clone_target", "replace": True, **as_of}
        result = p.run_operation("clone", args)
        assert not result.success
        assert "Nothing was changed" in result.said, result.said
        assert state(p, "clone_target") == before

    def test_a_clone_failing_after_the_target_was_emptied_restores_it(self, tables):
        p = tables
        rows, version = state(p, "clone_target")
        args = {"source": "clone_source", "target": "clone_target", "replace": True}
        with p.env(SPARKDELTA_FAIL_AT="before:*:create or replace table"):
            result = p.run_operation("clone", args)
        assert not result.success
        assert f"restored to its version {version}" in result.said, result.said
        after_rows, after_version = state(p, "clone_target")
        assert after_rows == rows
        operations = [h.operation for h in p.history("clone_target")][:2]
        assert operations == ["RESTORE", "DELETE"] and after_version == version + 2

    def test_the_same_table_is_refused_without_suggesting_replace(self, tables):
        p = tables
        before = state(p, "clone_source")
        result = p.run_operation("clone", {"source": "clone_source", "target": "clone_source"})
        assert not result.success
        assert "the target itself" in result.said and "replace: true" not in result.said
        assert state(p, "clone_source") == before

    def test_then_the_clone_succeeds(self, tables):
        p = tables
        args = {"source": "clone_source", "target": "clone_target", "replace": True}
        assert p.run_operation("clone", args).success
        assert state(p, "clone_target")[0] == [1, 2, 3]
