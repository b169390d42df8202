"""A stranger's project on `type: sparkdelta`: no `file_format` anywhere, and every node that
writes data is a Delta table, replaced in place so its history grows (dbt-spark's default is
Parquet, dropped and recreated). A node that asks for another format still gets it."""

from __future__ import annotations

import pytest

SEED_CSV = 'id,name,note\n1,O\'Brien,"say ""hi"""\n2,,plain\n'

MODELS = {
    "plain_table.sql": """
{{ config(materialized='table') }}
select id, name from {{ ref('people') }}
""",
    "merged.sql": """
{{ config(materialized='incremental', incremental_strategy='merge', unique_key='id') }}
select id, name, note from {{ ref('people') }}
""",
    "parquet_table.sql": """
{{ config(materialized='table', file_format='parquet') }}
select id from {{ ref('people') }}
""",
}

SNAPSHOT_YML = """
snapshots:
  - name: people_history
    relation: ref('people')
    config:
      unique_key: id
      strategy: check
      check_cols: all
"""

DELTA_NODES = ["people", "plain_table", "merged", "people_history"]


@pytest.fixture(scope="class")
def built_twice(scratch_project):
    p = scratch_project
    p.write("seeds/people.csv", SEED_CSV)
    for name, sql in MODELS.items():
        p.model(name.removesuffix(".sql"), sql)
    p.write("snapshots/people_history.yml", SNAPSHOT_YML)
    p.dbt("build")
    first = {name: len(p.history(name)) for name in DELTA_NODES}
    p.dbt("build")
    return p, first


class TestStrangersProject:
    def test_every_data_node_is_delta(self, built_twice):
        p, _ = built_twice
        for name in DELTA_NODES:
            assert p.detail(name).format == "delta", name

    def test_tables_and_seeds_are_replaced_in_place(self, built_twice):
        """Their history grows: the second build replaced them, it did not drop them."""
        p, first = built_twice
        for name in ["people", "plain_table"]:
            history = p.history(name)
            assert len(history) > first[name], name
            second_build = [row.operation for row in history if row.version >= first[name]]
            assert any(op.startswith("CREATE OR REPLACE TABLE") for op in second_build), name
        versions = [row.version for row in p.history("plain_table")]
        assert p.rows(f"select * from {p.relation('plain_table')} version as of {min(versions)}")

    def test_seed_values_are_exact(self, built_twice):
        p, _ = built_twice
        rows = p.rows(f"select id, name, note from {p.relation('people')} order by id")
        assert [tuple(row) for row in rows] == [(1, "O'Brien", 'say "hi"'), (2, None, "plain")]

    def test_snapshot_and_merge_work_without_settings(self, built_twice):
        p, _ = built_twice
        assert p.count("people_history") == 2
        assert p.count("merged") == 2
        assert "MERGE" in {row.operation for row in p.history("merged")}

    def test_another_format_when_asked(self, built_twice):
        p, _ = built_twice
        assert p.detail("parquet_table").format == "parquet"
