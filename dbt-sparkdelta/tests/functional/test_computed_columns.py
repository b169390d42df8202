"""Identity and generated columns through SQL DDL, on whichever target the suite runs
(SPARKDELTA_TEST_TARGET: session in `make test`, thrift and connect in `make
test-adapter-remote`): a table model and an incremental merge model, read back from the table's
own schema metadata and rows."""

from __future__ import annotations

import pytest
from dbt.tests.util import run_dbt, write_file

ORDERS_SEED = """order_id,ordered_at
1,2026-03-01 09:30:00
2,2026-03-02 23:59:59
"""

ORDERS_TABLE = """{{ config(materialized='table', identity_columns={'order_sk': {'start': 100}},
    generated_columns={'order_date': {'expression': 'cast(ordered_at as date)',
    'data_type': 'date'}}) }}
select order_id, cast(ordered_at as timestamp) as ordered_at from {{ ref('orders_seed') }}
"""

ORDERS_KEYED = """{{ config(materialized='incremental', unique_key='order_id',
    identity_columns=['order_sk']) }}
select order_id, cast(ordered_at as timestamp) as ordered_at from {{ ref('orders_seed') }}
"""


class TestIdentityAndGeneratedColumnsInSql:
    @pytest.fixture(scope="class")
    def seeds(self):
        return {"orders_seed.csv": ORDERS_SEED}

    @pytest.fixture(scope="class")
    def models(self):
        return {"orders_computed.sql": ORDERS_TABLE, "orders_keyed.sql": ORDERS_KEYED}

    def test_delta_computes_the_columns_and_incremental_runs_keep_the_keys(self, project):
        run_dbt(["seed"])
        run_dbt(["run"])
        schema = project.test_schema
        rows = project.run_sql(
            f"select order_id, order_sk, cast(order_date as string) "
            f"from {schema}.orders_computed order by order_id",
            fetch="all",
        )
        assert [(r[0], r[2]) for r in rows] == [(1, "2026-03-01"), (2, "2026-03-02")]
        assert sorted(r[1] for r in rows) == [100, 101]  # numbered by Delta from `start`
        properties = dict(
            project.run_sql(f"show tblproperties {schema}.orders_computed", fetch="all")
        )
        assert properties["delta.feature.identityColumns"] == "supported"
        assert properties["delta.feature.generatedColumns"] == "supported"

        keyed = dict(
            project.run_sql(f"select order_id, order_sk from {schema}.orders_keyed", fetch="all")
        )
        write_file(ORDERS_SEED + "3,2026-03-03 08:00:00\n", project.project_root, "seeds",
                   "orders_seed.csv")  # fmt: skip
        run_dbt(["seed"])
        run_dbt(["run", "-s", "orders_keyed"])
        after = dict(
            project.run_sql(f"select order_id, order_sk from {schema}.orders_keyed", fetch="all")
        )
        assert {key: after[key] for key in keyed} == keyed  # merged rows keep their keys
        assert after[3] > max(keyed.values())  # a new row is numbered after them

        # the table model rebuilt with its definition unchanged: one INSERT OVERWRITE commit
        versions = project.run_sql(f"describe history {schema}.orders_computed", fetch="all")
        run_dbt(["run", "-s", "orders_computed"])
        history = project.run_sql(f"describe history {schema}.orders_computed", fetch="all")
        assert len(history) == len(versions) + 1, history
        assert "Overwrite" in str(history[0]), history[0]  # its operationParameters' mode
        rows = project.run_sql(f"select count(*) from {schema}.orders_computed", fetch="one")
        assert rows[0] == 3  # the seed's three rows, none kept twice
