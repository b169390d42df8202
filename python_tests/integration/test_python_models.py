"""Python models: each kind of DataFrame a model may return becomes the same Delta table."""

from __future__ import annotations

import pytest

RETURNS = {
    "spark": "spark.createDataFrame(rows, 'id int, name string')",
    "pandas": "pd.DataFrame(rows, columns=['id', 'name']).astype({'id': 'int32'})",
    "pandas_on_spark": "ps.DataFrame(rows, columns=['id', 'name']).astype({'id': 'int32'})",
}

MODEL = """
import pandas as pd
import pyspark.pandas as ps


def model(dbt, spark):
    dbt.config(materialized="table")
    rows = [(1, "O'Brien"), (2, None)]
    return {expression}
"""


class TestReturnedDataFrames:
    @pytest.mark.parametrize("kind", sorted(RETURNS))
    def test_each_dataframe_kind_is_written_as_delta(self, scratch_project, kind):
        p = scratch_project
        name = f"returns_{kind}"
        p.write(f"models/{name}.py", MODEL.format(expression=RETURNS[kind]))
        p.dbt("run", "-s", name)
        assert p.detail(name).format == "delta"
        rows = p.rows(f"select id, name from {p.relation(name)} order by id")
        assert [tuple(r) for r in rows] == [(1, "O'Brien"), (2, None)]

    def test_other_return_value_names_the_model(self, scratch_project):
        p = scratch_project
        p.write("models/returns_list.py", MODEL.format(expression="rows"))
        result = p.dbt("run", "-s", "returns_list", expect_success=False)
        message = str(result.result[0].message)
        assert "returns_list" in message and "returned list" in message
