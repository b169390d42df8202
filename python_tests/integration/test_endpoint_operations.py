"""The `thrift` target end to end: the project starts its own Spark Thrift + Spark Connect
endpoint, `dbt build`s through it (Python models over Spark Connect), and every maintenance,
clone, restore and time-travel operation runs as `dbt run-operation` against it. Effects are
checked on the tables, read through the endpoint's Spark Connect side.

One endpoint for the session (`endpoint_shop`, shared with the analyst's loop on the endpoint),
with its own LAKEHOUSE_HOME and free ports: its Derby metastore admits one process, so it never
meets the pytest session's embedded Spark.
"""

from __future__ import annotations

import os

import pytest

from lakehouse import endpoint
from lakehouse.dbt_runner import environment
from lakehouse.processes import ProcessError
from python_tests.conftest import free_port, unique_schema
from python_tests.integration.conftest import DbtProject, assert_delta_computes_the_shop_s_keys

pytestmark = pytest.mark.endpoint


@pytest.fixture(scope="module")
def project(endpoint_shop):
    """The session's shop built through the endpoint, on the `thrift` target for the module."""
    with environment(endpoint_shop.env):
        yield endpoint_shop.project


@pytest.fixture(scope="module")
def running_endpoint(endpoint_shop):
    return endpoint_shop.endpoint


def operation(project: DbtProject, name: str, args: dict, expect_success: bool = True):
    outcome = project.run_operation(name, args)
    if expect_success:
        assert outcome.success, f"run-operation {name} {args} failed: {outcome.error}"
    else:
        assert not outcome.success, f"run-operation {name} {args} succeeded"
    return outcome


def version(project: DbtProject, table: str) -> int:
    return project.history(table)[0].version


def make_events_table(project: DbtProject, name: str, partitioned: bool = True) -> None:
    """A small partitioned Delta table written in several commits: several small files."""
    relation = project.relation(name)
    layout = "partitioned by (p)" if partitioned else "cluster by (id)"
    project.rows(f"create or replace table {relation} (id int, p string) using delta {layout}")
    for batch in range(3):
        project.rows(f"insert into {relation} values ({batch}, 'a'), ({batch + 10}, 'b')")


class TestBuildThroughThrift:
    def test_dbt_build_passes_and_python_model_runs_over_spark_connect(self, project):
        result = project.dbt("run", "-s", "fct_customer_revenue")
        models = project.model_results(result)
        assert [r.adapter_response.get("code") for r in models] == ["spark_connect"]
        detail = project.detail("fct_customer_revenue")
        assert detail.format == "delta"
        assert detail.properties["lakehouse.layer"] == "gold"
        assert project.count("fct_customer_revenue") > 0

    def test_delta_computes_the_shop_s_keys_through_thrift(self, project):
        assert_delta_computes_the_shop_s_keys(project.spark, project.relation, rebuilt=False)


class TestOptimize:
    def test_where_compacts_only_the_named_partition(self, project):
        make_events_table(project, "events")
        assert project.detail("events").numFiles == 6
        operation(
            project, "optimize_tables", {"models": [], "pattern": "events", "where": {"p": "a"}}
        )
        assert project.detail("events").numFiles == 4  # partition a: 3 -> 1, b untouched
        last = project.history("events")[0]
        assert last.operation == "OPTIMIZE"
        assert "p IN (a)" in last.operationParameters["predicate"]  # Delta: ["'p IN (a)"]
        operation(project, "optimize_tables", {"pattern": "events"})
        assert project.detail("events").numFiles == 2
        assert project.count("events") == 6

    def test_zorder_by_and_clustering_aware(self, project):
        operation(
            project, "optimize_tables", {"models": ["fct_orders"], "zorder_by": ["customer_id"]}
        )
        last = project.history("fct_orders")[0]
        assert last.operation == "OPTIMIZE"
        assert "customer_id" in last.operationParameters["zOrderBy"]

        make_events_table(project, "clustered_events", partitioned=False)
        files_before = project.detail("clustered_events").numFiles
        operation(project, "optimize_tables", {"pattern": "clustered_events"})
        assert project.detail("clustered_events").numFiles < files_before
        assert project.history("clustered_events")[0].operation == "OPTIMIZE"

    def test_bad_columns_fail_after_trying_every_table(self, project):
        make_events_table(project, "events_where")
        before = version(project, "events_where")
        result = operation(
            project, "optimize_tables", {"pattern": "events_where", "where": {"id": 1}},
            expect_success=False,
        )  # fmt: skip
        assert not result.success
        assert "not a partition column" in result.error
        assert version(project, "events_where") == before


def rows_read_from_files(project: DbtProject, table: str, as_of: str = "") -> int:
    """Rows of a table (version) counted by opening its data files; a bare count(*) is
    answered from the Delta log's statistics and would not notice deleted files."""
    sql = (
        f"select count(*) as n from {project.relation(table)} {as_of} "
        "where _metadata.file_path != ''"  # not `is not null`: the optimizer drops that
    )
    return project.rows(sql)[0].n


@pytest.fixture(scope="module")
def rewritten(project):
    """A table whose version 1 files are no longer referenced by the current version."""
    make_events_table(project, "vacuum_me")
    project.rows(f"insert overwrite {project.relation('vacuum_me')} values (100, 'a')")
    return project.count("vacuum_me")


class TestVacuum:
    def test_default_is_a_dry_run_that_deletes_nothing(self, project, rewritten):
        operation(
            project,
            "vacuum",
            {"pattern": "vacuum_me", "retain_hours": 0, "unsafe_allow_short_retention": True},
        )
        assert rows_read_from_files(project, "vacuum_me", "version as of 1") == 2
        assert "VACUUM END" not in {h.operation for h in project.history("vacuum_me")}

    def test_short_retention_is_refused_without_the_override(self, project, rewritten):
        result = operation(
            project, "vacuum", {"pattern": "vacuum_me", "retain_hours": 0, "dry_run": False},
            expect_success=False,
        )  # fmt: skip
        assert "delta.deletedFileRetentionDuration" in result.error
        assert "VACUUM START" not in {h.operation for h in project.history("vacuum_me")}
        assert rows_read_from_files(project, "vacuum_me", "version as of 1") == 2

    def test_lite_dry_run_and_default_retention_keep_recent_files(self, project, rewritten):
        operation(project, "vacuum", {"pattern": "vacuum_me", "lite": True})
        operation(project, "vacuum", {"pattern": "vacuum_me", "dry_run": False})
        # The default 7-day retention keeps the just-replaced files: version 1 still reads.
        assert rows_read_from_files(project, "vacuum_me", "version as of 1") == 2
        assert "VACUUM END" in {h.operation for h in project.history("vacuum_me")}

    def test_unsafe_vacuum_removes_old_files_and_restore_explains(self, project, rewritten):
        operation(
            project,
            "vacuum",
            {"pattern": "vacuum_me", "retain_hours": 0, "dry_run": False,
             "unsafe_allow_short_retention": True},
        )  # fmt: skip
        assert rows_read_from_files(project, "vacuum_me") == rewritten
        with pytest.raises(Exception, match="(?i)file"):
            rows_read_from_files(project, "vacuum_me", "version as of 1")
        for confirm in (False, True):
            result = operation(
                project, "restore",
                {"table": f"{project.schema}.vacuum_me", "version": 1, "confirm": confirm},
                expect_success=False,
            )  # fmt: skip
            assert "removed by VACUUM" in result.error


class TestReportsAndReorg:
    def test_history_detail_and_health_change_nothing(self, project):
        before = version(project, "int_orders_deduplicated")
        for name in ("history", "detail", "table_health"):
            operation(project, name, {"tags": [], "schema": project.schema})
        assert version(project, "int_orders_deduplicated") == before

    def test_health_file_counts_match_the_table(self, project):
        location = project.detail("int_orders_deduplicated").location
        sql = compile_inline(
            project, f"{{{{ delta_ops.get_table_files_sql('{location}', 33554432) }}}}"
        )
        files = project.rows(sql)[0]
        assert files.files == project.detail("int_orders_deduplicated").numFiles
        assert files.bytes == project.detail("int_orders_deduplicated").sizeInBytes

    def test_reorg_purge_rewrites_deletion_vectors(self, project):
        relation = project.relation("int_orders_deduplicated")
        project.rows(f"delete from {relation} where order_id % 7 = 0")
        rows = project.count("int_orders_deduplicated")
        location = project.detail("int_orders_deduplicated").location
        files_sql = compile_inline(
            project, f"{{{{ delta_ops.get_table_files_sql('{location}', 1) }}}}"
        )
        assert project.rows(files_sql)[0].dv_files > 0
        operation(project, "reorg_purge", {"models": ["int_orders_deduplicated"]})
        assert project.history("int_orders_deduplicated")[0].operation == "REORG"
        assert project.rows(files_sql)[0].dv_files == 0
        assert project.count("int_orders_deduplicated") == rows


def compile_inline(project: DbtProject, jinja: str) -> str:
    result = project.dbt("compile", "--inline", jinja, "--quiet")
    return result.result.results[0].node.compiled_code


class TestPropertiesAndFeatures:
    def test_property_policy_dry_run_by_default_then_applies(self, project):
        relation = project.relation("fct_customer_revenue")
        project.rows(f"alter table {relation} set tblproperties ('lakehouse.layer' = 'drifted')")
        operation(project, "apply_property_policy", {"models": ["fct_customer_revenue"]})
        assert project.tblproperties("fct_customer_revenue")["lakehouse.layer"] == "drifted"
        operation(
            project, "apply_property_policy", {"models": ["fct_customer_revenue"], "dry_run": False}
        )
        assert project.tblproperties("fct_customer_revenue")["lakehouse.layer"] == "gold"

    def test_enable_then_drop_a_feature_dry_run_first(self, project):
        make_events_table(project, "features")
        feature = {"feature": "v2Checkpoint", "pattern": "features"}
        operation(project, "enable_table_feature", feature)
        assert "v2Checkpoint" in project.detail("features").tableFeatures
        operation(project, "drop_table_feature", feature)
        assert "v2Checkpoint" in project.detail("features").tableFeatures
        operation(
            project,
            "drop_table_feature",
            {"feature": "v2Checkpoint", "pattern": "features", "dry_run": False},
        )
        assert "v2Checkpoint" not in project.detail("features").tableFeatures


class TestCloneAndRestore:
    def test_clone_into_a_new_schema_is_independent_of_its_source(self, project):
        source = f"{project.schema}.fct_orders"
        rows = project.count("fct_orders")
        clone = f"`{unique_schema('ops_new')}`.`orders_dev`"  # a schema that does not exist yet
        operation(project, "clone", {"source": source, "target": clone.replace("`", "")})
        assert project.rows(f"select count(*) as n from {clone}")[0].n == rows
        project.rows(f"delete from {clone} where true")
        assert project.rows(f"select count(*) as n from {clone}")[0].n == 0
        assert project.count("fct_orders") == rows

    def test_clone_at_a_version_and_replace_needs_the_flag(self, project):
        make_events_table(project, "versioned")
        source = f"{project.schema}.versioned"
        target = f"{project.schema}.versioned_v1"
        operation(project, "clone", {"source": source, "target": target, "version": 1})
        assert project.count("versioned_v1") == 2
        refused = operation(
            project, "clone", {"source": source, "target": target}, expect_success=False
        )
        assert "replace: true" in refused.error
        assert project.count("versioned_v1") == 2
        operation(project, "clone", {"source": source, "target": target, "replace": True})
        assert project.count("versioned_v1") == 6
        at = str(project.history("versioned")[-2].timestamp)  # the commit of version 1
        operation(
            project,
            "clone",
            {"source": source, "target": f"{project.schema}.versioned_ts", "timestamp": at},
        )
        assert project.count("versioned_ts") == 2

    def test_clone_schema(self, project):
        target_schema = unique_schema("ops_dev")
        operation(
            project, "clone_schema",
            {"source_schema": project.schema, "target_schema": target_schema},
        )  # fmt: skip
        cloned = project.rows(f"describe detail `{target_schema}`.`fct_orders`")[0]
        assert cloned.format == "delta"
        assert project.rows(f"select count(*) as n from `{target_schema}`.`fct_orders`")[0].n == (
            project.count("fct_orders")
        )

    def test_restore_is_a_dry_run_until_confirmed(self, project):
        make_events_table(project, "restore_me")
        table = f"{project.schema}.restore_me"
        current = version(project, "restore_me")
        operation(project, "restore", {"table": table, "version": 1})
        assert version(project, "restore_me") == current
        assert project.count("restore_me") == 6
        operation(project, "restore", {"table": table, "version": 1, "confirm": True})
        assert project.history("restore_me")[0].operation == "RESTORE"
        assert project.count("restore_me") == 2


class TestTimeTravelHelpers:
    def test_relation_as_of_table_version_and_history_query(self, project):
        make_events_table(project, "travel")
        sql = compile_inline(
            project,
            "select count(*) as n, {{ delta_ops.table_version('" + project.schema + ".travel') }}"
            " as current_version from {{ delta_ops.relation_as_of('"
            + project.schema
            + ".travel', version=1) }}",
        )
        row = project.rows(sql)[0]
        assert (row.n, row.current_version) == (2, version(project, "travel"))
        history_sql = compile_inline(
            project,
            "select version, operation from ({{ delta_ops.history_query('"
            + project.schema
            + ".travel') }}) as h order by version",
        )
        expected = [(h.version, h.operation) for h in reversed(project.history("travel"))]
        assert [tuple(r) for r in project.rows(history_sql)] == expected


class TestArgumentsCannotInject:
    @pytest.mark.parametrize(
        ("name", "args"),
        [
            ("optimize_tables", {"models": ["fct_orders; drop table fct_orders"]}),
            ("optimize_tables", {"schema": "x`; drop table fct_orders; --"}),
            ("optimize_tables", {"pattern": "fct_orders' or '1'='1"}),
            ("optimize_tables", {"models": ["fct_orders"], "zorder_by": ["customer_id) -- "]}),
            ("optimize_tables", {"models": ["fct_orders"], "where": {"p = p or 1=1 /*": "a"}}),
            ("vacuum", {"models": ["fct_orders"], "retain_hours": "0; drop table fct_orders"}),
            ("restore", {"table": "fct_orders`; drop table fct_orders", "version": 0}),
            ("restore", {"table": "fct_orders", "version": "0; drop table fct_orders"}),
            ("clone", {"source": "fct_orders", "target": "x; drop table fct_orders"}),
            ("clone", {"source": "fct_orders", "target": "y", "timestamp": "2026' --"}),
            ("drop_table_feature", {"feature": "x; drop table fct_orders", "pattern": "*"}),
        ],
    )
    def test_rejected_with_a_clear_error(self, project, name, args):
        before = version(project, "fct_orders")
        result = operation(project, name, args, expect_success=False)
        assert not result.success
        assert "Invalid" in result.error
        assert version(project, "fct_orders") == before
        assert project.count("fct_orders") > 0

    def test_quotes_in_a_where_value_stay_a_literal(self, project):
        make_events_table(project, "literal")
        operation(
            project, "optimize_tables", {"pattern": "literal", "where": {"p": "a' or '1'='1"}}
        )
        # No partition is named that: nothing compacted, the six files stay.
        assert project.detail("literal").numFiles == 6


def test_endpoint_status_and_port_taken(running_endpoint):
    healthy, line = endpoint.status(running_endpoint)
    assert healthy, line
    # Its Hive scratch state is in its own home, where another endpoint cannot delete it.
    assert (running_endpoint.directory / "operation_logs").is_dir()
    assert any(running_endpoint.session.tmp_dir.glob("*_resources"))
    with pytest.raises(ProcessError, match="already in use"):
        twin = endpoint.EndpointSettings(
            session=running_endpoint.session.__class__(home=running_endpoint.session.home / "twin"),
            thrift_port=running_endpoint.thrift_port,
            connect_port=free_port(),
        )
        endpoint.start(twin, timeout=5)
    assert not os.path.exists(twin.pid_file)
