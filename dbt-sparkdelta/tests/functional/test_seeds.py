"""dbt-tests-adapter: seeds (types, empty, formats, delimiters, BOM, full refresh), and the exact
load of every kind of value on the embedded session (NULLs, quotes, backslashes, unicode,
dates and timestamps, a large seed)."""

import datetime
import json
import re
import shutil
from pathlib import Path

import pytest
from dbt.tests.adapter.simple_seed import fixtures as seed_fixtures
from dbt.tests.adapter.simple_seed import seeds as seed_files
from dbt.tests.adapter.simple_seed.test_seed import (
    BaseBasicSeedTests,
    BaseSeedConfigFullRefreshOff,
    BaseSeedConfigFullRefreshOn,
    BaseSeedCustomSchema,
    BaseSeedParsing,
    BaseSeedSpecificFormats,
    BaseSeedWithEmptyDelimiter,
    BaseSeedWithUniqueDelimiter,
    BaseSeedWithWrongDelimiter,
    BaseSimpleSeedEnabledViaConfig,
    BaseSimpleSeedWithBOM,
    BaseTestEmptySeed,
)
from dbt.tests.adapter.simple_seed.test_seed_type_override import BaseSimpleSeedColumnOverride
from dbt.tests.util import run_dbt

from functional.test_snapshots import spark_sql


def create_seed_expected(project) -> None:
    """dbt-tests-adapter's `seed_expected` table (Postgres DDL + INSERT) in Spark SQL."""
    for statement in seed_files.seeds__expected_sql.split(";"):
        if statement.strip():
            # "seed_id" column names are Postgres identifiers; in Spark they would be strings
            project.run_sql(spark_sql(re.sub(r'"(\w+)"', r"\1", statement)))


class SparkSeedExpected:
    @pytest.fixture(scope="class", autouse=True)
    def setUp(self, project):
        create_seed_expected(project)


# Postgres drops a seed's dependent view with the seed (DROP ... CASCADE) on a full refresh, and
# these tests check that the view is gone. Spark has no CASCADE for a table's dependent views: the
# view stays (and reads the reloaded seed). The seed reload itself is checked by the others.
_NO_CASCADE = "Spark's DROP TABLE has no CASCADE: a full-refreshed seed's dependent view stays"


@pytest.mark.slow
class TestBasicSeedTests(SparkSeedExpected, BaseBasicSeedTests):
    @pytest.mark.skip(reason=_NO_CASCADE)
    def test_simple_seed_full_refresh_flag(self, project):
        pass


@pytest.mark.skip(reason=_NO_CASCADE)
class TestSeedConfigFullRefreshOn(SparkSeedExpected, BaseSeedConfigFullRefreshOn):
    pass


@pytest.mark.slow
class TestSeedConfigFullRefreshOff(SparkSeedExpected, BaseSeedConfigFullRefreshOff):
    pass


@pytest.mark.slow
class TestSeedCustomSchema(SparkSeedExpected, BaseSeedCustomSchema):
    @pytest.fixture(scope="class", autouse=True)
    def drop_custom_schema(self, project):
        yield
        project.run_sql(f"drop schema if exists {project.test_schema}_custom_schema cascade")


@pytest.mark.slow
class TestSeedWithUniqueDelimiter(SparkSeedExpected, BaseSeedWithUniqueDelimiter):
    pass


@pytest.mark.slow
class TestSeedWithWrongDelimiter(SparkSeedExpected, BaseSeedWithWrongDelimiter):
    pass


@pytest.mark.slow
class TestSeedWithEmptyDelimiter(SparkSeedExpected, BaseSeedWithEmptyDelimiter):
    pass


@pytest.mark.slow
class TestSimpleSeedEnabledViaConfig(BaseSimpleSeedEnabledViaConfig):
    pass


@pytest.mark.slow
class TestSeedParsing(SparkSeedExpected, BaseSeedParsing):
    pass


@pytest.mark.slow
class TestSimpleSeedWithBOM(BaseSimpleSeedWithBOM):
    @pytest.fixture(scope="class", autouse=True)
    def setUp(self, project):
        create_seed_expected(project)
        # the CSV with a byte order mark ships beside dbt-tests-adapter's seed tests
        source = Path(seed_files.__file__).parent / "seed_bom.csv"
        shutil.copy(source, Path(project.project_root) / "seeds" / "seed_bom.csv")


@pytest.mark.slow
class TestSeedSpecificFormats(BaseSeedSpecificFormats):
    """A 20,000-row seed and a unicode one. The base class's third seed, `seed.with.dots`, is left
    out: dbt-spark does not quote identifiers, and in Spark's catalog an unquoted dot separates
    namespaces (REQUIRES_SINGLE_PART_NAMESPACE)."""

    @pytest.fixture(scope="class")
    def seeds(self, test_data_dir):
        big_seed = "seed_id\n" + "".join(f"{i}\n" for i in range(20000))
        return {"big_seed.csv": big_seed, "seed_unicode.csv": seed_files.seed__unicode_csv}

    def test_simple_seed(self, project):
        results = run_dbt(["seed"])
        assert len(results) == 2
        [count] = project.run_sql(f"select count(*) from {project.test_schema}.big_seed", "all")
        assert count[0] == 20000


class TestEmptySeed(BaseTestEmptySeed):
    pass


class TestSimpleSeedColumnOverride(BaseSimpleSeedColumnOverride):
    @pytest.fixture(scope="class")
    def models(self):
        # the expected column types in Spark's names
        yml = (
            seed_fixtures.properties__schema_yml.replace("type: text", "type: string")
            .replace("type: integer", "type: bigint")
            .replace("type: timestamp without time zone", "type: timestamp")
        )
        return {"schema.yml": yml}

    @staticmethod
    def seed_enabled_types():
        return {"seed_id": "string", "birthday": "date"}

    @staticmethod
    def seed_tricky_types():
        return {
            "seed_id_str": "string",
            "looks_like_a_bool": "string",
            "looks_like_a_date": "string",
        }


TRICKY_CSV = (
    "id,name,note,amount,born,seen_at,flag\n"
    "1,O'Brien,it's \"quoted\",1.50,2024-02-29,2024-02-29 13:05:01,true\n"
    "2,,,,,,\n"
    "3,back\\slash,C:\\temp\\new,-0.25,1970-01-01,1970-01-01 00:00:00,false\n"
    "4,Zoë,日本語 ✓ ünïcödé,100,1999-12-31,1999-12-31 23:59:59,true\n"
    "5,'; drop table x; --,None,0,2000-01-01,2000-01-01 00:00:00,false\n"
)


class TestSeedValuesLoadExactly:
    """Every value lands as written: an empty cell is NULL (not the text 'None'), quotes,
    backslashes and unicode are kept, dates and timestamps keep their type, and a large seed
    loads in one commit."""

    @pytest.fixture(scope="class")
    def seeds(self):
        big = "id,label\n" + "".join(f"{i},row '{i}' \\ ✓\n" for i in range(30000))
        return {"tricky.csv": TRICKY_CSV, "big.csv": big}

    def test_values(self, project):
        run_dbt(["seed"])
        # Dates as text: PyHive (the thrift target) returns a DATE as a string; the type is
        # checked below.
        rows = project.run_sql(
            "select id, name, note, amount, cast(born as string), seen_at, flag "
            f"from {project.test_schema}.tricky order by id",
            fetch="all",
        )
        assert [tuple(row) for row in rows] == [
            (1, "O'Brien", 'it\'s "quoted"', 1.5, "2024-02-29",
             datetime.datetime(2024, 2, 29, 13, 5, 1), True),
            (2, None, None, None, None, None, None),
            (3, "back\\slash", "C:\\temp\\new", -0.25, "1970-01-01",
             datetime.datetime(1970, 1, 1), False),
            (4, "Zoë", "日本語 ✓ ünïcödé", 100, "1999-12-31",
             datetime.datetime(1999, 12, 31, 23, 59, 59), True),
            (5, "'; drop table x; --", "None", 0, "2000-01-01",
             datetime.datetime(2000, 1, 1), False),
        ]  # fmt: skip
        columns = {r[0]: r[1] for r in project.run_sql(
            f"describe {project.test_schema}.tricky", fetch="all")}  # fmt: skip
        assert columns["born"] == "date" and columns["seen_at"] == "timestamp"
        [big] = project.run_sql(
            f"select count(*), count(distinct label), max(label) from {project.test_schema}.big",
            fetch="all",
        )
        assert tuple(big) == (30000, 30000, "row '9999' \\ ✓")
        history = project.run_sql(f"describe history {project.test_schema}.big", fetch="all")
        operations = [row[4] for row in history]  # version, timestamp, userId, userName, operation
        assert operations == ["CREATE OR REPLACE TABLE AS SELECT"]

    def test_the_seed_commit_carries_its_dbt_node(self, project):
        """The rows' CREATE OR REPLACE goes through the adapter's connection on every method (on
        thrift too, from the Spark Connect session's view), so its commit names the dbt node."""
        run_dbt(["seed", "-s", "tricky"])
        history = project.run_sql(f"describe history {project.test_schema}.tricky", fetch="all")
        # DESCRIBE HISTORY's columns: 4 operation, 13 userMetadata (newest commit first).
        assert history[0][4] == "CREATE OR REPLACE TABLE AS SELECT"
        metadata = json.loads(history[0][13])
        assert metadata["dbt_node"].endswith("tricky") and metadata["dbt_invocation_id"]

    def test_a_bad_value_still_stops_the_seed(self, project):
        """The adapter checks values before loading (check_csv_values.sql); loading through the
        session keeps that check."""
        seeds = Path(project.project_root) / "seeds"
        (seeds / "bad.csv").write_text("id,n\n1,2\n2,two\n")
        (seeds / "bad.yml").write_text(
            "seeds:\n  - name: bad\n    config:\n      column_types: {n: int}\n"
        )
        results = run_dbt(["seed", "-s", "bad"], expect_pass=False)
        assert "value 'two' is not a valid int" in results[0].message


DOCUMENTED_SEED_YML = """
seeds:
  - name: documented
    description: it's the "documented" seed
    config:
      persist_docs: {relation: true, columns: true}
      column_types: {id: int, note: string}
      tblproperties: {delta.enableChangeDataFeed: "true", team: analytics}
      delta_features: [deletionVectors]
    columns:
      - name: id
        description: the id, 100% unique
        constraints: [{type: not_null}]
      - name: note
        description: a note with 'quotes' and a back\\slash
"""


class TestDeltaSeedReplacedInOneCommit:
    """A Delta seed is written by one CREATE OR REPLACE TABLE ... AS SELECT: the first load
    creates the table and every later load (plain or --full-refresh) replaces it in place, one
    commit each (a reader never sees it missing or empty), with the properties, features,
    constraint, table and column comments it declares, and its history kept."""

    @pytest.fixture(scope="class")
    def seeds(self):
        return {"documented.csv": "id,note\n1,O'Brien\n2,\n", "_seeds.yml": DOCUMENTED_SEED_YML}

    def test_one_commit_per_load(self, project):
        table = f"{project.test_schema}.documented"
        for args in (["seed"], ["seed"], ["seed", "--full-refresh"]):
            run_dbt(args)
        history = project.run_sql(f"describe history {table}", fetch="all")
        assert [(row[0], row[4]) for row in history] == [
            (version, "CREATE OR REPLACE TABLE AS SELECT") for version in (2, 1, 0)
        ]
        for row in history:
            assert json.loads(row[13])["dbt_node"].endswith("documented")
        rows = project.run_sql(f"select id, note from {table} order by id", fetch="all")
        assert [tuple(row) for row in rows] == [(1, "O'Brien"), (2, None)]
        # the first version stays readable: replaced in place, not dropped
        [count] = project.run_sql(f"select count(*) from {table} version as of 0", fetch="all")
        assert count[0] == 2

    def test_declared_properties_constraints_and_comments(self, project):
        table = f"{project.test_schema}.documented"
        properties = dict(
            tuple(row) for row in project.run_sql(f"show tblproperties {table}", fetch="all")
        )
        assert properties["delta.enableChangeDataFeed"] == "true"
        assert properties["team"] == "analytics"
        assert properties["delta.feature.deletionVectors"] == "supported"
        assert properties["delta.constraints.id_not_null"] == "`id` is not null"
        columns = {
            row[0]: (row[1], row[2])
            for row in project.run_sql(f"describe table extended {table}", fetch="all")
        }
        assert columns["id"] == ("int", "the id, 100% unique")
        assert columns["note"] == ("string", "a note with 'quotes' and a back\\slash")
        assert columns["Comment"][0] == 'it\'s the "documented" seed'


class TestSeedOfAnotherFormat:
    """A seed that asks for Parquet keeps dbt-spark's drop and create, then gets its rows by one
    INSERT ... SELECT through the same route (exact values)."""

    @pytest.fixture(scope="class")
    def seeds(self):
        return {
            "flat.csv": "id,name\n1,O'Brien\n2,\n",
            "_flat.yml": "seeds:\n  - name: flat\n    config: {file_format: parquet}\n",
        }

    def test_loads_and_reloads(self, project):
        for _ in range(2):
            run_dbt(["seed"])
        table = f"{project.test_schema}.flat"
        rows = project.run_sql(f"select id, name from {table} order by id", fetch="all")
        assert [tuple(row) for row in rows] == [(1, "O'Brien"), (2, None)]
        detail = project.run_sql(f"describe table extended {table}", fetch="all")
        assert ("Provider", "parquet") in {(row[0], row[1]) for row in detail}
