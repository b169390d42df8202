"""dbt-tests-adapter: model contracts and constraints on Delta.

`not_null` and `check` are enforced: Delta CHECK constraints in the table's first commit (the
CREATE OR REPLACE ... AS SELECT fails as a whole, so the previous table and its rows stay:
dbt's rollback semantics). `primary_key`, `foreign_key` and `unique` cannot be enforced by
Delta: the model is built, a warning says so, and they are recorded as `dbt.constraint.<name>`
table properties."""

import pytest
from dbt.tests.adapter.constraints import fixtures
from dbt.tests.adapter.constraints.test_constraints import (
    BaseConstraintQuotedColumn,
    BaseConstraintsRollback,
    BaseConstraintsRuntimeDdlEnforcement,
    BaseIncrementalConstraintsColumnsEqual,
    BaseIncrementalConstraintsRollback,
    BaseIncrementalConstraintsRuntimeDdlEnforcement,
    BaseModelConstraintsRuntimeEnforcement,
    BaseTableConstraintsColumnsEqual,
    BaseViewConstraintsColumnsEqual,
)
from dbt.tests.util import run_dbt

# Spark has no `text` type
SCHEMA_YML = fixtures.model_schema_yml.replace("text", "string")
FK_SCHEMA_YML = fixtures.model_fk_constraint_schema_yml.replace("text", "string")
MODEL_CONSTRAINTS_YML = fixtures.constrained_model_schema_yml.replace("text", "string")


class SparkColumnTypes:
    """Spark's SQL literals and type names, as the session reports them (dbt-spark's list)."""

    @pytest.fixture
    def string_type(self):
        return "string"

    @pytest.fixture
    def int_type(self):
        return "int"

    @pytest.fixture
    def schema_string_type(self):
        return "string"

    @pytest.fixture
    def schema_int_type(self):
        return "int"

    @pytest.fixture
    def data_types(self, int_type, schema_int_type, string_type, schema_string_type):
        # sql_column_value, schema_data_type, error_data_type
        return [
            ["1", schema_int_type, int_type],
            ['"1"', schema_string_type, string_type],
            ["true", "boolean", "boolean"],
            ['array("1","2","3")', "array<string>", "array<string>"],
            ["array(1,2,3)", "array<int>", "array<int>"],
            ["6.45", "decimal(3,2)", "decimal(3,2)"],
            ["cast('2019-01-01' as date)", "date", "date"],
            ["cast('2019-01-01' as timestamp)", "timestamp", "timestamp"],
        ]


@pytest.mark.slow
class TestTableConstraintsColumnsEqual(SparkColumnTypes, BaseTableConstraintsColumnsEqual):
    @pytest.fixture(scope="class")
    def models(self):
        return {
            "my_model_wrong_order.sql": fixtures.my_model_wrong_order_sql,
            "my_model_wrong_name.sql": fixtures.my_model_wrong_name_sql,
            "constraints_schema.yml": SCHEMA_YML,
        }


@pytest.mark.slow
class TestViewConstraintsColumnsEqual(SparkColumnTypes, BaseViewConstraintsColumnsEqual):
    @pytest.fixture(scope="class")
    def models(self):
        return {
            "my_model_wrong_order.sql": fixtures.my_model_view_wrong_order_sql,
            "my_model_wrong_name.sql": fixtures.my_model_view_wrong_name_sql,
            "constraints_schema.yml": SCHEMA_YML,
        }


@pytest.mark.slow
class TestIncrementalConstraintsColumnsEqual(
    SparkColumnTypes, BaseIncrementalConstraintsColumnsEqual
):
    @pytest.fixture(scope="class")
    def models(self):
        return {
            "my_model_wrong_order.sql": fixtures.my_model_incremental_wrong_order_sql,
            "my_model_wrong_name.sql": fixtures.my_model_incremental_wrong_name_sql,
            "constraints_schema.yml": SCHEMA_YML,
        }


def delta_ddl(properties: dict[str, str], columns: str, select: str) -> str:
    """The DDL the adapter generates for a contracted model: one CREATE OR REPLACE TABLE ... AS
    SELECT with its properties, the enforced constraints among them (delta.constraints.*: a
    not_null becomes `<column> is not null`) and the unenforced ones (dbt.constraint.*)."""
    listed = ",\n".join(f"'{key}' = '{properties[key]}'" for key in sorted(properties))
    return (
        f"create or replace table <model_identifier> using delta\n"
        f"tblproperties (\n{listed}\n)\nas\nselect {columns}\nfrom\n(\n{select}\n) as model_subq"
    )


_SELECT = (
    "-- depends_on: <foreign_key_model_identifier>\n"
    "select 'blue' as color, 1 as id, '2019-01-01' as date_day"
)
_FOREIGN_KEY = "foreign_key (id) references <foreign_key_model_identifier> (id)"
_CHECKS = {
    "delta.constraints.check_41ba5126": "id >= 1",
    "delta.constraints.check_971d06b5": "(id > 0)",
    "delta.constraints.id_not_null": "`id` is not null",
    "sparkdelta.managed_constraints": "check_41ba5126,check_971d06b5,id_not_null",
}
# fixtures.model_fk_constraint_schema_yml: column-level constraints
_EXPECTED_DDL = delta_ddl(
    {
        **_CHECKS,
        "dbt.constraint.foreign_key_id": _FOREIGN_KEY,
        "dbt.constraint.primary_key_id": "primary_key (id)",
        "dbt.constraint.unique_id": "unique (id)",
        "sparkdelta.managed_properties": "dbt.constraint.foreign_key_id,"
        "dbt.constraint.primary_key_id,dbt.constraint.unique_id",
    },
    "id, color, date_day",
    _SELECT,
)
# fixtures.constrained_model_schema_yml: model-level constraints
_EXPECTED_MODEL_DDL = delta_ddl(
    {
        **_CHECKS,
        "dbt.constraint.foreign_key_id": _FOREIGN_KEY,
        "dbt.constraint.primary_key_id": "primary_key (id)",
        "dbt.constraint.strange_uniqueness_requirement": "unique (color, date_day)",
        "sparkdelta.managed_properties": "dbt.constraint.foreign_key_id,"
        "dbt.constraint.primary_key_id,dbt.constraint.strange_uniqueness_requirement",
    },
    "id, color, date_day",
    _SELECT,
)


class DeltaDdl:
    @pytest.fixture(scope="class")
    def expected_sql(self):
        return _EXPECTED_DDL


class TestTableConstraintsDdlEnforcement(DeltaDdl, BaseConstraintsRuntimeDdlEnforcement):
    @pytest.fixture(scope="class")
    def models(self):
        return {
            "my_model.sql": fixtures.my_model_wrong_order_depends_on_fk_sql,
            "foreign_key_model.sql": fixtures.foreign_key_model_sql,
            "constraints_schema.yml": FK_SCHEMA_YML,
        }

    def test_unenforced_constraints_are_table_properties(self, project):
        run_dbt(["run", "-s", "+my_model"])
        properties = dict(
            project.run_sql(f"show tblproperties {project.test_schema}.my_model", fetch="all")
        )
        assert properties["dbt.constraint.primary_key_id"] == "primary_key (id)"
        assert properties["dbt.constraint.unique_id"] == "unique (id)"
        assert properties["dbt.constraint.foreign_key_id"].startswith("foreign_key (id) references")
        assert properties["delta.constraints.id_not_null"] == "`id` is not null"


@pytest.mark.slow
class TestIncrementalConstraintsDdlEnforcement(
    DeltaDdl, BaseIncrementalConstraintsRuntimeDdlEnforcement
):
    @pytest.fixture(scope="class")
    def models(self):
        return {
            "my_model.sql": fixtures.my_model_incremental_wrong_order_depends_on_fk_sql,
            "foreign_key_model.sql": fixtures.foreign_key_model_sql,
            "constraints_schema.yml": FK_SCHEMA_YML,
        }


class DeltaRollback:
    @pytest.fixture(scope="class")
    def expected_error_messages(self):
        # Delta names the violated constraint and the row (the check `id > 0` fails first)
        return ["DELTA_VIOLATE_CONSTRAINT_WITH_VALUES", "violated by row with values", "id : null"]


class TestTableConstraintsRollback(DeltaRollback, BaseConstraintsRollback):
    """The failed CREATE OR REPLACE leaves the previous table as it was (color stays blue)."""

    @pytest.fixture(scope="class")
    def models(self):
        return {"my_model.sql": fixtures.my_model_sql, "constraints_schema.yml": SCHEMA_YML}


@pytest.mark.slow
class TestIncrementalConstraintsRollback(DeltaRollback, BaseIncrementalConstraintsRollback):
    @pytest.fixture(scope="class")
    def models(self):
        return {
            "my_model.sql": fixtures.my_incremental_model_sql,
            "constraints_schema.yml": SCHEMA_YML,
        }


class TestModelConstraintsRuntimeEnforcement(BaseModelConstraintsRuntimeEnforcement):
    @pytest.fixture(scope="class")
    def expected_sql(self):
        return _EXPECTED_MODEL_DDL

    @pytest.fixture(scope="class")
    def models(self):
        return {
            "my_model.sql": fixtures.my_model_wrong_order_depends_on_fk_sql,
            "foreign_key_model.sql": fixtures.foreign_key_model_sql,
            "constraints_schema.yml": MODEL_CONSTRAINTS_YML,
        }


class TestConstraintQuotedColumn(BaseConstraintQuotedColumn):
    @pytest.fixture(scope="class")
    def models(self):
        return {
            "my_model.sql": fixtures.my_model_with_quoted_column_name_sql,
            "constraints_schema.yml": fixtures.model_quoted_column_schema_yml.replace(
                "text", "string"
            ).replace('"from"', "`from`"),
        }

    @pytest.fixture(scope="class")
    def expected_sql(self):
        return delta_ddl(
            {
                "delta.constraints.check_7a7cced1": "(`from` = \\'blue\\')",
                "delta.constraints.from_not_null": "`from` is not null",
                "delta.constraints.id_not_null": "`id` is not null",
                "sparkdelta.managed_constraints": "check_7a7cced1,from_not_null,id_not_null",
                "sparkdelta.managed_properties": "",
            },
            "id, `from`, date_day",
            "select 'blue' as `from`, 1 as id, '2019-01-01' as date_day",
        )
