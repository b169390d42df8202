"""The `connect` target end to end, against the project's own endpoint started with a Spark
Connect token (LAKEHOUSE_CONNECT_TOKEN): dbt's SQL and Python models through Spark Connect
alone, the token refused or accepted, Delta's errors and a lost endpoint explained.

Effects are read through a Spark Connect session of the test (with the token).
"""

from __future__ import annotations

import json
import secrets

import pytest

from lakehouse import endpoint
from lakehouse.dbt_runner import environment
from python_tests.conftest import endpoint_env, running_test_endpoint, unique_schema
from python_tests.integration.conftest import (
    SCRATCH_PROJECT_YML,
    DbtProject,
    ScratchProject,
    assert_delta_computes_the_shop_s_keys,
    overlapping_python_models,
)

pytestmark = [pytest.mark.endpoint, pytest.mark.connect]


@pytest.fixture(scope="module")
def token() -> str:
    return secrets.token_urlsafe(24)


@pytest.fixture(scope="module")
def running_endpoint(tmp_path_factory, token):
    with running_test_endpoint(endpoint_env(tmp_path_factory, connect_token=token)) as settings:
        yield settings


@pytest.fixture(scope="module")
def connect_session(running_endpoint, token):
    from dbt.adapters.sparkdelta.spark_connect import open_session

    # Bounded retries: the last test stops the endpoint, and stop() then must not retry for
    # PySpark's default of over 10 minutes.
    session = open_session(f"{running_endpoint.connect_url}/;token={token}", 5)
    yield session
    session.stop()


def connect_env(settings, token: str | None) -> dict[str, str]:
    return {
        "LAKEHOUSE_TARGET": "connect",
        "LAKEHOUSE_SPARK_CONNECT_URL": settings.connect_url,
        "LAKEHOUSE_CONNECT_TOKEN": token or "",
        "LAKEHOUSE_THREADS": "1",
        "LAKEHOUSE_CONNECT_TIMEOUT": "3",
    }


@pytest.fixture(scope="module")
def scratch(running_endpoint, connect_session, tmp_path_factory) -> ScratchProject:
    project_dir = tmp_path_factory.mktemp("connect_scratch")
    (project_dir / "dbt_project.yml").write_text(SCRATCH_PROJECT_YML)
    return ScratchProject(
        spark=connect_session,
        schema=unique_schema("connect"),
        bronze_schema=unique_schema("unused"),
        work_dir=tmp_path_factory.mktemp("dbt_connect"),
        project_dir=project_dir,
    )


class TestToken:
    """The endpoint refuses Spark Connect clients without its token, with a clear error."""

    @pytest.mark.parametrize("given", [None, "wrong-token"])
    def test_a_client_without_the_token_is_refused(self, scratch, running_endpoint, given):
        scratch.model("refused", "select 1 as id")
        with environment(connect_env(running_endpoint, given)):
            result = scratch.dbt("run", "-s", "refused", expect_success=False)
        assert not result.success
        said = str(result.exception or [r.message for r in result.result])
        sent = "an invalid" if given else "no"
        assert f"refused the client: it sent {sent} token" in said, said
        # the adapter's words: the profile's field (the project maps LAKEHOUSE_CONNECT_TOKEN)
        assert "Set the profile's `token`" in said and running_endpoint.connect_url in said
        assert "wrong-token" not in said  # a token is never shown
        assert not scratch.spark.catalog.tableExists(f"{scratch.schema}.refused")

    def test_a_client_with_the_token_works(self, scratch, running_endpoint, token):
        scratch.model("accepted", "select 1 as id union all select 2")
        with environment(connect_env(running_endpoint, token)):
            result = scratch.dbt("run", "-s", "accepted")
        assert [r.status for r in result.result] == ["success"]
        assert scratch.count("accepted") == 2
        assert scratch.detail("accepted").format == "delta"


class TestSqlOverConnect:
    def test_seed_incremental_merge_and_show(self, scratch, running_endpoint, token):
        scratch.write("seeds/people.csv", "id,name\n1,O'Brien\n2,\n3,Zoë\n")
        scratch.model(
            "people_merged",
            "{{ config(unique_key='id') }}\n"
            "select id, coalesce(name, 'unknown') as name from {{ ref('people') }}",
        )
        with environment(connect_env(running_endpoint, token)):
            scratch.dbt("seed")
            scratch.dbt("run", "-s", "people_merged")
            scratch.dbt("run", "-s", "people_merged")  # the MERGE path
            shown = scratch.dbt("show", "--inline", "select count(*) as n from {{ ref('people') }}")
        rows = scratch.rows(f"select id, name from {scratch.relation('people')} order by id")
        assert [tuple(r) for r in rows] == [(1, "O'Brien"), (2, None), (3, "Zoë")]
        assert scratch.history("people_merged")[0].operation == "MERGE"
        assert scratch.count("people_merged") == 3
        [shown_rows] = [list(r.agate_table.rows) for r in shown.result.results]
        assert [tuple(r) for r in shown_rows] == [(3,)]

    def test_delta_error_is_delta_s_message_without_the_server_stack(
        self, scratch, running_endpoint, token
    ):
        scratch.model(
            "bad_merge",
            "{{ config(unique_key='id', incremental_strategy='merge', "
            "merge_update_columns=['nope']) }}\nselect 1 as id",
        )
        with environment(connect_env(running_endpoint, token)):
            scratch.dbt("run", "-s", "bad_merge")
            result = scratch.dbt("run", "-s", "bad_merge", expect_success=False)
        [failed] = result.result.results
        assert failed.status == "error"
        assert "nope" in failed.message
        assert "JVM stacktrace" not in failed.message and "\tat " not in failed.message


class TestPipelineOnConnect:
    """The project's SQL and Python models on the connect target: no Thrift involved."""

    def test_the_project_builds_with_four_threads(
        self, running_endpoint, connect_session, token, tmp_path_factory
    ):
        """The whole project's `dbt build` with the connect target's 4 threads (CI's threads
        round on connect: Python models run at once over the connection's Connect session)."""
        project = DbtProject(
            spark=connect_session,
            schema=unique_schema("connect_pipeline"),
            bronze_schema=unique_schema("connect_bronze"),
            work_dir=tmp_path_factory.mktemp("dbt_connect_pipeline"),
            orders=120,
        )
        with environment({**connect_env(running_endpoint, token), "LAKEHOUSE_THREADS": "4"}):
            project.load_bronze(through=0)
            result = project.dbt("build")
            overlaps = overlapping_python_models(project.work_dir / "target" / "run_results.json")
            # again with no upstream change: the change-driven model skips itself over Connect
            [rerun] = project.model_results(project.dbt("run", "-s", "fct_daily_revenue"))
        assert rerun.adapter_response == {
            "_message": "OK (no upstream change)",
            "code": "cdf",
            "rows_affected": 0,
        }
        assert overlaps, "no two Python models ran at the same time with 4 threads"
        models = {r.node.name: r for r in project.model_results(result)}
        assert models["fct_customer_revenue"].adapter_response.get("code") == "spark_connect"
        assert models["fct_daily_revenue"].adapter_response.get("code") == "spark_connect"
        for name in ("fct_orders", "fct_customer_revenue", "fct_daily_revenue"):
            assert project.count(name) > 0, name
            assert project.detail(name).format == "delta"
        assert_delta_computes_the_shop_s_keys(connect_session, project.relation, rebuilt=False)
        # The Python model ran on the dbt connection's own Connect session: its commit carries
        # the node's provenance, set on that session by the adapter's model hook.
        [commit] = project.history("fct_customer_revenue")[:1]
        assert json.loads(commit.userMetadata)["dbt_node"] == "model.lakehouse.fct_customer_revenue"
        assert json.loads(commit.userMetadata)["dbt_target"] == "connect"


class TestLostEndpoint:
    """Last in the module: it stops the endpoint."""

    def test_a_stopped_endpoint_fails_the_run_naming_the_url(
        self, scratch, running_endpoint, token
    ):
        scratch.model("after_stop", "select 1 as id")
        endpoint.stop(running_endpoint)
        with environment(connect_env(running_endpoint, token)):
            result = scratch.dbt("run", "-s", "after_stop", expect_success=False)
        said = str(result.exception or [r.message for r in result.result])
        assert not result.success
        assert f"Could not reach the Spark Connect endpoint {running_endpoint.connect_url}" in said
        assert "connect_timeout=3s" in said
        assert "is it running" in said
        assert token not in said
