"""The foundation promise: the project builds on Spark with Delta, and Python models write
Delta tables that honour their config."""

from __future__ import annotations

import json

import pytest

from python_tests.integration.conftest import SHOP_THREADS


@pytest.fixture(scope="class")
def built(shop):
    """The session's shop and its first build (batch 0, tests included)."""
    return shop.project, shop.builds[0]


class TestBuild:
    def test_every_node_passes(self, built):
        _, result = built
        statuses = {r.node.unique_id: r.status for r in result.result}
        assert statuses and all(s in ("success", "pass") for s in statuses.values()), statuses
        kinds = {unique_id.split(".")[0] for unique_id in statuses}
        assert {"seed", "model", "snapshot", "test"} <= kinds

    def test_python_model_writes_delta_with_its_tblproperties(self, built):
        project, _ = built
        detail = project.detail("fct_customer_revenue")
        assert detail.format == "delta"
        assert detail.properties["lakehouse.layer"] == "gold"
        assert detail.properties["delta.enableChangeDataFeed"] == "true"

    def test_python_model_rows_match_the_same_logic_in_sql(self, built):
        project, _ = built
        expected = project.rows(
            f"""
            select customer_id, count(*) as order_count, sum(order_amount) as revenue
            from {project.relation("fct_orders")}
            where status != 'cancelled'
            group by customer_id
            """
        )
        actual = project.rows(
            f"select customer_id, order_count, revenue from "
            f"{project.relation('fct_customer_revenue')}"
        )
        assert len(actual) > 0
        assert sorted(map(tuple, actual)) == sorted(map(tuple, expected))

    def test_python_model_ran_in_this_process(self, built):
        project, result = built
        python_results = [r for r in result.result if r.node.language == "python"]
        assert python_results
        # run_results records which helper ran each Python model (AdapterResponse.code).
        assert {r.adapter_response.get("code") for r in python_results} == {"session"}

    def test_incremental_models_start_with_their_features(self, built):
        project, _ = built
        properties = project.tblproperties("int_orders_deduplicated")
        for feature in ("enableChangeDataFeed", "enableRowTracking", "enableDeletionVectors"):
            assert properties[f"delta.{feature}"] == "true"
        # the first commit carries the first load, every row of it in the change feed
        changes = f"table_changes('{project.schema}.int_orders_deduplicated', 0, 0)"
        first_load = project.rows(
            f"select count(*) as n from {changes} where _change_type = 'insert'"
        )[0].n
        assert first_load == project.count("int_orders_deduplicated", version=0) > 0

    def test_docs_generate_carries_the_descriptions(self, built):
        project, _ = built
        project.dbt("docs", "generate")
        target = project.work_dir / "target"
        manifest = json.loads((target / "manifest.json").read_text())
        catalog = json.loads((target / "catalog.json").read_text())
        for unique_id in ("model.lakehouse.fct_orders", "model.lakehouse.int_orders_deduplicated"):
            node = manifest["nodes"][unique_id]
            assert node["description"]
            assert node["columns"] and all(c["description"] for c in node["columns"].values())
            assert unique_id in catalog["nodes"]

    def test_a_rebuild_without_new_input_keeps_the_rows(self, shop):
        """The incremental models (and their tests) built again on the shop's last state: the
        whole project's later builds, tests included, are the shop's own."""
        project = shop.project
        incremental = [
            r.node.name
            for r in shop.builds[-1].result
            if r.node.resource_type == "model" and r.node.config.materialized == "incremental"
        ]
        assert "int_order_lines_deduplicated" in incremental
        before = {m: project.count(m) for m in incremental}
        project.dbt("build", "--threads", SHOP_THREADS, "-s", "config.materialized:incremental")
        assert {m: project.count(m) for m in incremental} == before


class TestSparkConnectSubmission:
    def test_python_model_runs_through_spark_connect(self, shop, spark_connect_port):
        project = shop.project
        revenue = project.rows(f"select * from {project.relation('fct_customer_revenue')}")
        with project.env(
            LAKEHOUSE_PYTHON_SUBMISSION="spark_connect",
            LAKEHOUSE_SPARK_CONNECT_URL=f"sc://localhost:{spark_connect_port}",
        ):
            result = project.dbt("run", "-s", "fct_customer_revenue")
        models = project.model_results(result)
        assert [r.adapter_response.get("code") for r in models] == ["spark_connect"]
        detail = project.detail("fct_customer_revenue")
        assert detail.format == "delta"
        assert detail.properties["lakehouse.layer"] == "gold"
        rebuilt = project.rows(f"select * from {project.relation('fct_customer_revenue')}")
        assert sorted(rebuilt, key=repr) == sorted(revenue, key=repr) and revenue


class TestBronzeLoad:
    def test_reloading_a_batch_commits_nothing(self, dbt_project):
        dbt_project.load_bronze(through=1)
        orders = f"`{dbt_project.bronze_schema}`.`orders`"
        versions = len(dbt_project.rows(f"describe history {orders}"))
        rows = dbt_project.rows(f"select count(*) as n from {orders}")[0].n
        dbt_project.load_bronze(through=1)
        assert len(dbt_project.rows(f"describe history {orders}")) == versions
        assert dbt_project.rows(f"select count(*) as n from {orders}")[0].n == rows
        batches = dbt_project.rows(f"select distinct _batch_id from {orders} order by 1")
        assert [r._batch_id for r in batches] == [0, 1]
