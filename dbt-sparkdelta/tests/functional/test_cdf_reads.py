"""A `cdf` model that joins its upstream's change rows with the upstream itself, by name, in one
query: the changes are Delta's change feed and the table is the table (in such a query Delta
4.4 on Spark 4.1 resolves table_changes('<name>', ...) to the table itself, so cdf_changes
reads the change feed by path)."""

from __future__ import annotations

import pytest
from dbt.tests.util import run_dbt

from .people_upstream import SOURCES_YML, Upstream

ENRICHED_SQL = """
{{ config(materialized='incremental', incremental_strategy='cdf', unique_key='id') }}
select
    changes.id,
    changes.name,
    people.city as current_city,
    changes._change_type,
    changes._commit_version,
    changes._cdf_watermark
from {{ cdf_changes(source('raw', 'people')) }} as changes
left join {{ source('raw', 'people') }} as people on changes.id = people.id
"""


class TestCdfChangesJoinedWithTheirTable:
    @pytest.fixture(scope="class")
    def models(self):
        return {"sources.yml": SOURCES_YML, "people_enriched.sql": ENRICHED_SQL}

    def test_the_changes_and_the_table_are_each_what_they_are(self, project):
        people = Upstream(project)
        people.create({1: ("Ann", "Oslo"), 2: ("Bo", "Lyon")})
        run_dbt(["run"])
        people.update(1, "Anna", "Porto")
        people.delete([2])
        people.insert({3: ("Zoë", None)})
        run_dbt(["run"])

        enriched = project.run_sql(
            f"select id, name, current_city from {project.test_schema}.people_enriched",
            fetch="all",
        )
        expected = project.run_sql(f"select id, name, city from {people.table}", fetch="all")
        assert sorted(map(tuple, enriched)) == sorted(map(tuple, expected))
        assert sorted(map(tuple, expected)) == [(1, "Anna", "Porto"), (3, "Zoë", None)]
