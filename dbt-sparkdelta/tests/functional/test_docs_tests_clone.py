"""dbt-tests-adapter: unit tests, persist docs, store failures, dbt clone, relations, caching,
grants."""

import pytest
from dbt.tests.adapter.caching.test_caching import (
    BaseCachingLowercaseModel,
    BaseCachingSelectedSchemaOnly,
    BaseCachingUppercaseModel,
    BaseNoPopulateCache,
)
from dbt.tests.adapter.dbt_clone import fixtures as clone_fixtures
from dbt.tests.adapter.dbt_clone.test_dbt_clone import BaseClonePossible
from dbt.tests.adapter.grants.test_incremental_grants import BaseIncrementalGrants
from dbt.tests.adapter.grants.test_invalid_grants import BaseInvalidGrants
from dbt.tests.adapter.grants.test_model_grants import BaseModelGrants
from dbt.tests.adapter.grants.test_seed_grants import BaseSeedGrants
from dbt.tests.adapter.grants.test_snapshot_grants import BaseSnapshotGrants
from dbt.tests.adapter.persist_docs.test_persist_docs import (
    BasePersistDocsAllColumnsMissing,
    BasePersistDocsColumnMissing,
    BasePersistDocsQuotedColumnCaseSensitive,
)
from dbt.tests.adapter.relations.test_changing_relation_type import (
    BaseChangeRelationTypeValidator,
)
from dbt.tests.adapter.relations.test_dropping_schema_named import BaseDropSchemaNamed
from dbt.tests.adapter.store_test_failures_tests import basic
from dbt.tests.adapter.store_test_failures_tests.test_store_test_failures import (
    TEST_AUDIT_SCHEMA_SUFFIX,
    StoreTestFailuresBase,
)
from dbt.tests.adapter.unit_testing.test_case_insensitivity import BaseUnitTestCaseInsensivity
from dbt.tests.adapter.unit_testing.test_invalid_input import BaseUnitTestInvalidInput
from dbt.tests.adapter.unit_testing.test_types import BaseUnitTestingTypes
from dbt.tests.util import run_dbt, run_dbt_and_capture


class TestUnitTestingTypes(BaseUnitTestingTypes):
    @pytest.fixture
    def data_types(self):
        # sql_value, yaml_value
        return [
            ["1", "1"],
            ["2.0", "2.0"],
            ["'12345'", "12345"],
            ["'string'", "string"],
            ["true", "true"],
            ["date '2011-11-11'", "2011-11-11"],
            ["timestamp '2013-11-03 00:00:00-0'", "2013-11-03 00:00:00-0"],
            ["array(1, 2, 3)", "'array(1, 2, 3)'"],
            ["map('10', 't', '15', 'f')", """'map("10", "t", "15", "f")'"""],
            ["named_struct('a', 1, 'b', 2)", """'named_struct("a", 1, "b", 2)'"""],
        ]


@pytest.mark.slow
class TestUnitTestCaseInsensitivity(BaseUnitTestCaseInsensivity):
    pass


@pytest.mark.slow
class TestUnitTestInvalidInput(BaseUnitTestInvalidInput):
    pass


class TestPersistDocs:
    """persist_docs on Delta tables and views: the model's and the columns' descriptions land
    in the metastore (DESCRIBE TABLE EXTENDED)."""

    @pytest.fixture(scope="class")
    def project_config_update(self):
        return {"models": {"+persist_docs": {"relation": True, "columns": True}}}

    @pytest.fixture(scope="class")
    def models(self):
        return {
            "a_table.sql": "{{ config(materialized='table') }} select 1 as id, 'x' as name",
            "a_view.sql": "{{ config(materialized='view') }} select 1 as id, 'x' as name",
            "an_incremental.sql": "{{ config(materialized='incremental') }} select 1 as id",
            "schema.yml": """
version: 2
models:
  - name: a_table
    description: "The table's description, with 'quotes'"
    columns:
      - name: id
        description: "The id's description"
      - name: name
        description: A name
  - name: a_view
    description: The view's description
    columns:
      - name: id
        description: The view id
  - name: an_incremental
    description: The incremental description
    columns:
      - name: id
        description: The incremental id
""",
        }

    def _described(self, project, name):
        rows = project.run_sql(f"describe table extended {project.test_schema}.{name}", fetch="all")
        return {row[0]: (row[1], row[2]) for row in rows}

    def test_comments(self, project):
        run_dbt(["run"])
        run_dbt(["run"])  # the incremental model's second run keeps its comments
        table = self._described(project, "a_table")
        assert table["id"][1] == "The id's description"
        assert table["name"][1] == "A name"
        assert table["Comment"][0] == "The table's description, with 'quotes'"
        view = self._described(project, "a_view")
        assert view["id"][1] == "The view id"
        assert view["Comment"][0] == "The view's description"
        incremental = self._described(project, "an_incremental")
        assert incremental["id"][1] == "The incremental id"
        assert incremental["Comment"][0] == "The incremental description"


@pytest.mark.slow
class TestPersistDocsColumnMissing(BasePersistDocsColumnMissing):
    pass


@pytest.mark.slow
class TestPersistDocsAllColumnsMissing(BasePersistDocsAllColumnsMissing):
    pass


@pytest.mark.slow
class TestPersistDocsQuotedColumnCaseSensitive(BasePersistDocsQuotedColumnCaseSensitive):
    pass


class TestStoreTestFailures(StoreTestFailuresBase):
    @pytest.fixture(scope="class")
    def project_config_update(self):
        return {
            "seeds": {"quote_columns": False, "test": self.column_type_overrides()},
            "data_tests": {"+schema": TEST_AUDIT_SCHEMA_SUFFIX, "+store_failures": True},
        }

    @pytest.fixture(scope="function", autouse=True)
    def drop_audit_schema(self, project):
        yield
        project.run_sql(f"drop schema if exists {self.test_audit_schema} cascade")

    def test_store_and_assert(self, project):
        self.run_tests_store_one_failure(project)
        self.run_tests_store_failures_and_assert(project)


@pytest.mark.slow
class TestStoreTestFailuresAsInteractions(basic.StoreTestFailuresAsInteractions):
    pass


@pytest.mark.slow
class TestStoreTestFailuresAsProjectLevelOff(basic.StoreTestFailuresAsProjectLevelOff):
    pass


@pytest.mark.slow
class TestStoreTestFailuresAsProjectLevelView(basic.StoreTestFailuresAsProjectLevelView):
    pass


@pytest.mark.slow
class TestStoreTestFailuresAsGeneric(basic.StoreTestFailuresAsGeneric):
    pass


@pytest.mark.slow
class TestStoreTestFailuresAsProjectLevelEphemeral(basic.StoreTestFailuresAsProjectLevelEphemeral):
    pass


@pytest.mark.slow
class TestStoreTestFailuresAsExceptions(basic.StoreTestFailuresAsExceptions):
    pass


class TestClonePossible(BaseClonePossible):
    """`dbt clone` makes Delta SHALLOW CLONEs of the state's tables."""

    @pytest.fixture(scope="class")
    def models(self):
        return {
            "table_model.sql": clone_fixtures.table_model_sql,
            "view_model.sql": clone_fixtures.view_model_sql,
            "ephemeral_model.sql": clone_fixtures.ephemeral_model_sql,
            "schema.yml": clone_fixtures.schema_yml,
            "exposures.yml": clone_fixtures.exposures_yml,
        }

    @pytest.fixture(scope="class")
    def macros(self):
        return {
            "macros.sql": clone_fixtures.macros_sql,
            "infinite_macros.sql": clone_fixtures.infinite_macros_sql,
            "get_schema_name.sql": clone_fixtures.get_schema_name_sql,
        }

    @pytest.fixture(scope="class")
    def project_config_update(self):
        return {"seeds": {"test": {"quote_columns": False}}}

    def test_can_clone_true(self, project, unique_schema, other_schema):
        """dbt's checks, then a view cloned again: one atomic CREATE OR REPLACE VIEW (dbt's
        default view materialization, which dbt clone falls back to, makes a temporary view,
        renames and drops, and the view is missing in between)."""
        super().test_can_clone_true(project, unique_schema, other_schema)
        clone = ["clone", "--state", "state", "--target", "otherschema", "--full-refresh"]
        results, log = run_dbt_and_capture([*clone, "--select", "view_model", "--debug"])
        assert [r.status for r in results] == ["success"]
        for other_relation in ("__dbt_tmp", "__dbt_backup", " rename to "):
            assert other_relation not in log, other_relation
        assert f"create or replace view {other_schema}.view_model" in log
        [cloned] = project.run_sql(f"select count(*) from {other_schema}.view_model", fetch="one")
        [built] = project.run_sql(f"select count(*) from {unique_schema}.view_model", fetch="one")
        assert cloned == built > 0

    @pytest.fixture(autouse=True)
    def clean_up(self, project):
        yield
        for schema in (f"{project.test_schema}_seeds", project.test_schema):
            project.run_sql(f"drop schema if exists {schema} cascade")


@pytest.mark.slow
class TestChangeRelationTypes(BaseChangeRelationTypeValidator):
    pass


@pytest.mark.slow
class TestDropSchemaNamed(BaseDropSchemaNamed):
    pass


class SparkCaching:
    """dbt-tests-adapter's cache check, on Spark's two-part names: a relation has no database
    (the base test lowercases it), so schema and identifier are compared."""

    def run_and_inspect_cache(self, project, run_args=None):
        run_dbt(run_args)
        [relation] = list(project.adapter.cache.relations)
        assert relation.schema == project.test_schema.lower()
        run_dbt(run_args)  # the cache is now populated from the schema listing
        [listed] = list(project.adapter.cache.relations)
        assert (relation.schema.lower(), relation.identifier.lower()) == (
            listed.schema.lower(),
            listed.identifier.lower(),
        )


@pytest.mark.slow
class TestCachingLowercaseModel(SparkCaching, BaseCachingLowercaseModel):
    pass


@pytest.mark.slow
class TestCachingUppercaseModel(SparkCaching, BaseCachingUppercaseModel):
    pass


@pytest.mark.slow
class TestCachingSelectedSchemaOnly(SparkCaching, BaseCachingSelectedSchemaOnly):
    pass


@pytest.mark.slow
class TestNoPopulateCache(SparkCaching, BaseNoPopulateCache):
    pass


# Open-source Spark has no SQL privileges: GRANT/REVOKE/SHOW GRANTS exist only with a catalog
# that implements them (Databricks' Unity Catalog, Hive's SQL-standard authorization through a
# Hive server). The embedded session's catalog refuses them, so `grants:` cannot apply here.
_NO_GRANTS = "open-source Spark's session catalog has no GRANT/REVOKE/SHOW GRANTS"


@pytest.mark.skip(reason=_NO_GRANTS)
class TestModelGrants(BaseModelGrants):
    pass


@pytest.mark.skip(reason=_NO_GRANTS)
class TestIncrementalGrants(BaseIncrementalGrants):
    pass


@pytest.mark.skip(reason=_NO_GRANTS)
class TestSeedGrants(BaseSeedGrants):
    pass


@pytest.mark.skip(reason=_NO_GRANTS)
class TestSnapshotGrants(BaseSnapshotGrants):
    pass


@pytest.mark.skip(reason=_NO_GRANTS)
class TestInvalidGrants(BaseInvalidGrants):
    pass
