"""dbt-tests-adapter: snapshots (timestamp, check cols, hard deletes) on Delta."""

import re

import pytest
from dbt.tests.adapter.basic.test_snapshot_check_cols import BaseSnapshotCheckCols
from dbt.tests.adapter.basic.test_snapshot_timestamp import BaseSnapshotTimestamp
from dbt.tests.adapter.simple_snapshot import new_record_check_mode
from dbt.tests.adapter.simple_snapshot import new_record_dbt_valid_to_current as valid_to_current
from dbt.tests.adapter.simple_snapshot import new_record_timestamp_mode as new_record
from dbt.tests.adapter.simple_snapshot.new_record_dbt_valid_to_current import (
    BaseSnapshotNewRecordDbtValidToCurrent,
)
from dbt.tests.adapter.simple_snapshot.new_record_timestamp_mode import (
    BaseSnapshotNewRecordTimestampMode,
)


def spark_sql(statement: str) -> str:
    """One of dbt-tests-adapter's Postgres fixture statements in Spark SQL: Spark types, no
    database part, Delta tables (Spark 4 already reads `::` casts, `||` and intervals)."""
    text = statement.replace("{database}.{schema}", "{schema}")
    text = re.sub(r"TIMESTAMP WITHOUT TIME ZONE", "TIMESTAMP", text, flags=re.I)
    text = re.sub(r"\bTEXT\b", "STRING", text, flags=re.I)
    text = re.sub(r"VARCHAR\(\d+\)", "STRING", text, flags=re.I)
    text = re.sub(r"::text\b", "::string", text, flags=re.I)
    text = text.strip().rstrip(";")
    if re.match(r"\s*create table", text, re.I):
        text += " using delta"
    return text


@pytest.mark.slow
class TestSnapshotCheckCols(BaseSnapshotCheckCols):
    pass


class TestSnapshotTimestamp(BaseSnapshotTimestamp):
    pass


class TestSnapshotHardDeletesNewRecord(BaseSnapshotNewRecordTimestampMode):
    """`hard_deletes: new_record`: a deleted source row gets a row with dbt_is_deleted = True,
    a re-inserted one a new current row."""

    @pytest.fixture(scope="class")
    def snapshots(self):
        # Spark has no database level above the schema
        return {"snapshot.sql": new_record._snapshot_actual_sql.replace("{{target.database}}.", "")}

    @pytest.fixture(scope="class")
    def seed_new_record_mode_statements(self):
        return [spark_sql(s) for s in new_record._seed_new_record_mode_statements]

    @pytest.fixture(scope="class")
    def invalidate_sql_statements(self):
        return [spark_sql(s) for s in new_record._invalidate_sql_statements]

    @pytest.fixture(scope="class")
    def update_sql(self):
        return spark_sql(new_record._update_sql)

    @pytest.fixture(scope="class")
    def delete_sql(self):
        return spark_sql(new_record._delete_sql)

    @pytest.fixture(scope="class")
    def reinsert_sql(self):
        return spark_sql(new_record._reinsert_sql)


@pytest.mark.slow
class TestSnapshotHardDeletesNewRecordCheckCols(TestSnapshotHardDeletesNewRecord):
    """The same with the check strategy on all columns."""

    @pytest.fixture(scope="class")
    def models(self):
        return {
            "snapshots.yml": new_record_check_mode._snapshots_yml,
            "ref_snapshot.sql": new_record_check_mode._ref_snapshot_sql,
        }


@pytest.mark.slow
class TestSnapshotHardDeletesNewRecordValidToCurrent(BaseSnapshotNewRecordDbtValidToCurrent):
    """`dbt_valid_to_current` with `new_record`: two snapshots after a delete add one deletion
    row, not two."""

    @pytest.fixture(scope="class")
    def snapshots(self):
        sql = valid_to_current._snapshot_actual_sql.replace("{{target.database}}.", "")
        return {"snapshot.sql": sql}

    @pytest.fixture(scope="class")
    def seed_new_record_mode_statements(self):
        return [spark_sql(s) for s in valid_to_current._seed_new_record_mode_statements]

    @pytest.fixture(scope="class")
    def delete_sql(self):
        return spark_sql(valid_to_current._delete_sql)
