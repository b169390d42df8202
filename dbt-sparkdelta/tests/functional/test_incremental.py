"""dbt-tests-adapter: incremental models (unique keys, predicates, on_schema_change, merge
exclude columns, microbatch) on Delta."""

import pytest
from dbt.tests.adapter.incremental.test_incremental_merge_exclude_columns import (
    BaseMergeExcludeColumns,
)
from dbt.tests.adapter.incremental.test_incremental_microbatch import BaseMicrobatch
from dbt.tests.adapter.incremental.test_incremental_on_schema_change import (
    BaseIncrementalOnSchemaChange,
)
from dbt.tests.adapter.incremental.test_incremental_predicates import BaseIncrementalPredicates
from dbt.tests.adapter.incremental.test_incremental_unique_id import BaseIncrementalUniqueKey
from dbt.tests.util import run_dbt


@pytest.mark.slow
class TestIncrementalUniqueKey(BaseIncrementalUniqueKey):
    pass


# dbt-spark's model for merge predicates: `delete+insert` predicates in the base class become
# a MERGE whose predicate keeps the row with id 2 out of the match, so it is inserted again.
_PREDICATES_MODEL = """
{{ config(materialized = 'incremental', unique_key = 'id') }}
{% if not is_incremental() %}
select cast(1 as bigint) as id, 'hello' as msg, 'blue' as color
union all
select cast(2 as bigint) as id, 'goodbye' as msg, 'red' as color
{% else %}
select cast(1 as bigint) as id, 'hey' as msg, 'blue' as color
union all
select cast(2 as bigint) as id, 'yo' as msg, 'green' as color
union all
select cast(3 as bigint) as id, 'anyway' as msg, 'purple' as color
{% endif %}
"""


class TestIncrementalPredicatesMerge(BaseIncrementalPredicates):
    @pytest.fixture(scope="class")
    def project_config_update(self):
        return {
            "models": {
                "+incremental_predicates": ["dbt_internal_dest.id != 2"],
                "+incremental_strategy": "merge",
            }
        }

    @pytest.fixture(scope="class")
    def models(self):
        return {"delete_insert_incremental_predicates.sql": _PREDICATES_MODEL}


@pytest.mark.slow
class TestPredicatesMerge(TestIncrementalPredicatesMerge):
    """The same through dbt's older config name, `predicates`."""

    @pytest.fixture(scope="class")
    def project_config_update(self):
        return {
            "models": {
                "+predicates": ["dbt_internal_dest.id != 2"],
                "+incremental_strategy": "merge",
            }
        }


class TestIncrementalPredicatesDeleteInsert(BaseIncrementalPredicates):
    """dbt's own `delete+insert` with predicates (the adapter's MERGE ... DELETE + INSERT)."""


@pytest.mark.slow
class TestIncrementalOnSchemaChange(BaseIncrementalOnSchemaChange):
    """Every on_schema_change mode, sync_all_columns included: removing a column needs Delta's
    column mapping (without it the adapter stops with an error that says so), which the
    project config turns on for these models."""

    @pytest.fixture(scope="class")
    def project_config_update(self):
        return {"models": {"+tblproperties": {"delta.columnMapping.mode": "name"}}}


@pytest.mark.slow
class TestIncrementalOnSchemaChangeMerge(BaseIncrementalOnSchemaChange):
    """The same with `merge` on a unique key (dbt-spark's Delta profile)."""

    @pytest.fixture(scope="class")
    def project_config_update(self):
        return {
            "models": {
                "+incremental_strategy": "merge",
                "+unique_key": "id",
                "+tblproperties": {"delta.columnMapping.mode": "name"},
            }
        }


class TestSyncAllColumnsWithoutColumnMapping(BaseIncrementalOnSchemaChange):
    """sync_all_columns must drop a column; without column mapping Delta cannot, and the run
    stops naming the model, the columns and the property to set (the table is unchanged)."""

    def test_run_incremental_sync_all_columns(self, project):
        select = "model_a incremental_sync_remove_only"
        run_dbt(["run", "--models", select, "--full-refresh"])
        results = run_dbt(["run", "--models", select], expect_pass=False)
        [failed] = [r for r in results if r.node.name == "incremental_sync_remove_only"]
        assert "delta.columnMapping.mode" in failed.message
        assert "incremental_sync_remove_only" in failed.message
        relation = f"{project.test_schema}.incremental_sync_remove_only"
        columns = [r[0] for r in project.run_sql(f"describe {relation}", fetch="all")]
        assert "field2" in columns  # nothing was dropped

    # the other modes are covered by TestIncrementalOnSchemaChange
    test_run_incremental_ignore = None
    test_run_incremental_append_new_columns = None
    test_run_incremental_fail_on_schema_change = None


class TestMergeExcludeColumns(BaseMergeExcludeColumns):
    pass


class TestMicrobatch(BaseMicrobatch):
    pass
