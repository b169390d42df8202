"""dbt-tests-adapter: Python models (table, incremental, pandas / pandas-on-Spark / Spark
DataFrames, dbt.config meta, --empty and --sample) submitted in-process on the session."""

import pytest
from dbt.tests.adapter.python_model.test_python_model import (
    BasePythonEmptyTests,
    BasePythonIncrementalTests,
    BasePythonMetaGetTests,
    BasePythonModelTests,
    BasePythonSampleTests,
)
from dbt.tests.adapter.python_model.test_spark import BasePySparkTests
from dbt.tests.util import run_dbt


class TestPythonModel(BasePythonModelTests):
    pass


class TestPythonIncrementalModel(BasePythonIncrementalTests):
    pass


class TestPySparkDataFrames(BasePySparkTests):
    """pandas, pandas-on-Spark and Spark DataFrames. The base class's fourth model imports
    `databricks.koalas`, the package pandas-on-Spark replaced in Spark 3.2 (not installable
    beside PySpark 4): it is excluded, as dbt-spark does."""

    def test_different_dataframes(self, project):
        results = run_dbt(["run", "--exclude", "koalas_df"])
        assert len(results) == 3
        for name in ("pandas_df", "pyspark_df", "pandas_on_spark_df"):
            rows = project.run_sql(f"select count(*) from {project.test_schema}.{name}", "all")
            assert rows[0][0] > 0, name


@pytest.mark.slow
class TestPythonMetaGet(BasePythonMetaGetTests):
    pass


@pytest.mark.slow
class TestPythonEmpty(BasePythonEmptyTests):
    pass


@pytest.mark.slow
class TestPythonSample(BasePythonSampleTests):
    pass
