"""The change-driven models (`cdf` strategy): after every run each equals a full recompute of
its logic, a crash before the commit is repaired by the rerun, and a rerun without upstream
change writes nothing.

The silver upstream tables are driven directly with SQL (random inserts, updates, physical
deletes, tombstones, re-inserts; several commits between runs), not through the pipeline.
"""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta

import pytest

from dbt.adapters.sparkdelta.change_feed import parse_watermark, state_before
from python_tests.shop_reference import daily_revenue

CONSUMERS = ("fct_order_lines", "fct_daily_revenue", "int_order_row_lineage")
PYTHON_CONSUMERS = ("fct_daily_revenue", "int_order_row_lineage")
FEATURES = (
    "tblproperties ('delta.enableChangeDataFeed' = 'true', 'delta.enableRowTracking' = 'true', "
    "'delta.enableDeletionVectors' = 'true')"
)
LINE_COLUMNS = [
    "order_line_id", "order_id", "product_id", "quantity", "unit_price", "line_amount",
    "updated_at",
]  # fmt: skip
DAY0 = datetime(2026, 1, 1)

pytestmark = pytest.mark.sequence  # make test-sequences


class Upstream:
    """The two silver tables the consumers read, changed by random SQL statements."""

    def __init__(self, project, seed: int) -> None:
        self.project = project
        self.random = random.Random(seed)
        self.orders = project.relation("int_orders_deduplicated")
        self.lines = project.relation("int_order_lines_deduplicated")
        # The lineage the row-tracking consumer must hold, kept here by its rule, run by run:
        # {row_id: (order_id, first_seen_version, last_changed_version, change_count)}.
        self.lineage: dict[int, tuple] = {}

    def sql(self, statement: str) -> None:
        self.project.spark.sql(statement)

    def create(self) -> None:
        self.sql(f"create schema if not exists `{self.project.schema}`")
        for name in (*CONSUMERS, "int_orders_deduplicated", "int_order_lines_deduplicated"):
            self.sql(f"drop table if exists {self.project.relation(name)}")
        self.sql(
            f"create table {self.orders} (order_id bigint, customer_id bigint, status string, "
            "ordered_at timestamp, updated_at timestamp, is_deleted boolean, batch_id int) "
            f"using delta {FEATURES}"
        )
        self.sql(
            f"create table {self.lines} (order_line_id bigint, order_id bigint, "
            "product_id bigint, quantity int, unit_price decimal(10,2), "
            "line_amount decimal(21,2), updated_at timestamp, is_deleted boolean, batch_id int) "
            f"using delta {FEATURES}"
        )
        for _ in range(6):
            self.insert_order()
        for _ in range(10):
            self.insert_line()

    # --- one commit each ---
    def _when(self) -> str:
        return (DAY0 + timedelta(days=self.random.randrange(4), hours=self.random.randrange(24)))\
            .strftime("timestamp'%Y-%m-%d %H:00:00'")  # fmt: skip

    def insert_order(self) -> None:  # a new key, or a re-insert of a deleted one
        key = self.random.randint(1, 10)
        status = self.random.choice(["placed", "paid", "cancelled"])
        self.sql(
            f"insert into {self.orders} select {key}, {key % 3}, '{status}', {self._when()}, "
            f"current_timestamp(), false, 0 where not exists "
            f"(select 1 from {self.orders} where order_id = {key})"
        )

    def insert_line(self) -> None:  # may reference an order that arrives later
        key, order = self.random.randint(1, 25), self.random.randint(1, 10)
        quantity = self.random.randint(1, 4)
        self.sql(
            f"insert into {self.lines} select {key}, {order}, {key % 5}, {quantity}, 2.50, "
            f"{quantity} * 2.50, current_timestamp(), false, 0 where not exists "
            f"(select 1 from {self.lines} where order_line_id = {key})"
        )

    def change(self) -> None:
        order, line = self.random.randint(1, 10), self.random.randint(1, 25)
        status = self.random.choice(["paid", "cancelled", "placed"])
        quantity = self.random.randint(1, 4)
        statement = self.random.choice(
            [
                f"update {self.orders} set status = '{status}' where order_id = {order}",
                f"update {self.orders} set ordered_at = {self._when()} where order_id = {order}",
                f"update {self.orders} set is_deleted = not is_deleted where order_id = {order}",
                f"delete from {self.orders} where order_id = {order}",
                f"update {self.lines} set quantity = {quantity}, line_amount = {quantity} * "
                f"unit_price where order_line_id = {line}",
                f"update {self.lines} set order_id = {order} where order_line_id = {line}",
                f"update {self.lines} set is_deleted = true where order_line_id = {line}",
                f"delete from {self.lines} where order_line_id = {line}",
            ]
        )
        self.sql(statement)

    def touch_both(self) -> None:
        """A change every consumer sees: one live line and one order updated."""
        line = self.project.rows(f"select min(order_line_id) as k from {self.lines}")[0].k
        order = self.project.rows(
            f"select min(order_id) as k from {self.orders} where ordered_at is not null"
        )[0].k
        self.sql(f"update {self.lines} set quantity = quantity + 1 where order_line_id = {line}")
        self.sql(f"update {self.orders} set status = 'paid' where order_id = {order}")

    def batch(self) -> None:
        for _ in range(3):
            self.random.choice([self.insert_order, self.insert_line, self.change, self.change])()

    # --- checks ---
    def observe_row_tracking(self) -> None:
        """After a run: live rows (not tombstones) whose row commit version moved are counted;
        a row that is gone or a tombstone leaves the lineage."""
        live = self.project.rows(
            "select _metadata.row_id as row_id, order_id, "
            f"_metadata.row_commit_version as version from {self.orders} where not is_deleted"
        )
        lineage = {}
        for row in live:
            seen = self.lineage.get(row.row_id)
            if seen is None:
                lineage[row.row_id] = (row.order_id, row.version, row.version, 1)
            elif seen[2] != row.version:
                lineage[row.row_id] = (row.order_id, seen[1], row.version, seen[3] + 1)
            else:
                lineage[row.row_id] = seen
        self.lineage = lineage


def sorted_rows(df_or_rows) -> list[tuple]:
    rows = df_or_rows.collect() if hasattr(df_or_rows, "collect") else df_or_rows
    return sorted(tuple(row) for row in rows)


def assert_consumers_equal_full_recompute(upstream: Upstream) -> None:
    project, spark = upstream.project, upstream.project.spark
    lines, orders = spark.table(upstream.lines), spark.table(upstream.orders)

    expected_lines = lines.where("not is_deleted").select(*LINE_COLUMNS)
    actual_lines = spark.table(project.relation("fct_order_lines")).select(*LINE_COLUMNS)
    assert sorted_rows(actual_lines) == sorted_rows(expected_lines)

    # recomputed in plain Python from the silver rows (not the model's own function); PySpark
    # hands timestamps over in the local zone, dates are the session's (UTC)
    live_orders = {
        o.order_id: {**o.asDict(), "ordered_at": o.ordered_at.astimezone(UTC)}
        for o in orders.where("not is_deleted").collect()
    }
    live_lines = [line.asDict() for line in lines.where("not is_deleted").collect()]
    actual_revenue = spark.table(project.relation("fct_daily_revenue")).select(
        "order_date", "order_count", "line_count", "revenue"
    )
    assert sorted_rows(actual_revenue) == daily_revenue(live_lines, live_orders)

    expected_lineage = [(row_id, *values) for row_id, values in upstream.lineage.items()]
    actual_lineage = spark.table(project.relation("int_order_row_lineage")).select(
        "row_id", "order_id", "first_seen_version", "last_changed_version", "change_count"
    )
    assert sorted_rows(actual_lineage) == sorted(expected_lineage)


def versions(project) -> dict[str, int]:
    return {name: project.history(name)[0].version for name in CONSUMERS}


def run_consumers(project, *args: str, **kwargs):
    return project.dbt("run", "-s", *CONSUMERS, *args, **kwargs)


@pytest.fixture(scope="class")
def upstream(dbt_project) -> Upstream:
    """Upstream tables and consumers built once per class; the tests below continue from each
    other's state in file order (a dbt run is slow on a small machine)."""
    upstream = Upstream(dbt_project, seed=11)
    upstream.create()
    run_consumers(dbt_project)
    upstream.observe_row_tracking()
    return upstream


class TestChangeDrivenModels:
    def test_first_run_is_a_full_snapshot(self, upstream):
        assert_consumers_equal_full_recompute(upstream)
        for name in CONSUMERS:
            assert upstream.project.history(name)[0].operation.startswith("CREATE OR REPLACE")

    def test_every_run_equals_a_full_recompute(self, upstream):
        for _ in range(2):
            for _ in range(upstream.random.randint(2, 3)):  # several commits between runs
                upstream.batch()
            run_consumers(upstream.project)
            upstream.observe_row_tracking()
            assert_consumers_equal_full_recompute(upstream)

    def test_state_before_equals_the_table_at_the_old_version(self, upstream):
        """What fct_daily_revenue subtracts: the current rows with the change feed's pre-images
        put back equal Delta's time travel to the old version, after random commits (updates,
        physical deletes, tombstones, re-inserts of a deleted key)."""
        project, spark = upstream.project, upstream.project.spark
        keys = {
            "int_order_lines_deduplicated": "order_line_id",
            "int_orders_deduplicated": "order_id",
        }
        old = {name: project.history(name)[0].version for name in keys}
        for _ in range(6):
            upstream.batch()
        for name, key in keys.items():
            table, end = project.relation(name), project.history(name)[0].version
            changes = spark.sql(
                f"select * from table_changes('{project.schema}.{name}', {old[name] + 1}, {end})"
            )
            rebuilt = state_before(spark.table(table), changes, key)
            expected = spark.sql(f"select * from {table} version as of {old[name]}")
            assert sorted_rows(rebuilt) == sorted_rows(expected)
        run_consumers(upstream.project)  # the tests below start from consumers up to date
        upstream.observe_row_tracking()
        assert_consumers_equal_full_recompute(upstream)

    def test_rerun_without_upstream_change_writes_nothing(self, upstream):
        before = versions(upstream.project)
        result = run_consumers(upstream.project)
        models = upstream.project.model_results(result)
        assert [r.status for r in models] == ["success"] * len(CONSUMERS)
        assert versions(upstream.project) == before
        # skipped before the model ran (its upstreams' newest commits are the watermark's):
        # no change rows were built, the Python models sent no job
        responses = {r.node.name: r.adapter_response for r in models}
        assert responses == {
            name: {"_message": "OK (no upstream change)", "code": "cdf", "rows_affected": 0}
            for name in CONSUMERS
        }

    def test_crash_before_the_commit_then_rerun_ends_like_an_uninterrupted_run(self, upstream):
        project = upstream.project
        upstream.batch()
        upstream.touch_both()
        before = versions(project)
        # every consumer's MERGE (data and watermark in one commit) fails before it commits
        with project.env(SPARKDELTA_FAIL_AT="before:*:merge"):
            crashed = run_consumers(project, expect_success=False)
        statuses = {r.node.name: r.status for r in project.model_results(crashed)}
        assert statuses == {name: "error" for name in CONSUMERS}
        assert versions(project) == before  # nothing half-written
        run_consumers(project)
        upstream.observe_row_tracking()
        assert_consumers_equal_full_recompute(upstream)

    def test_each_commit_carries_the_upstream_versions_it_applied(self, upstream):
        project, schema = upstream.project, upstream.project.schema
        lines_version = project.history("int_order_lines_deduplicated")[0].version
        orders_version = project.history("int_orders_deduplicated")[0].version
        latest = {
            name: parse_watermark(project.history(name)[0].userMetadata) for name in CONSUMERS
        }
        assert latest["fct_order_lines"] == {
            f"{schema}.int_order_lines_deduplicated": lines_version
        }
        assert latest["fct_daily_revenue"] == {
            f"{schema}.int_order_lines_deduplicated": lines_version,
            f"{schema}.int_orders_deduplicated": orders_version,
        }
        assert latest["int_order_row_lineage"] == {
            f"{schema}.int_orders_deduplicated": orders_version
        }
        # The session setting that put the watermark into the commit is gone again.
        user_metadata = project.spark.conf.get(
            "spark.databricks.delta.commitInfo.userMetadata", None
        )
        assert user_metadata in (None, "")

    def test_python_consumers_run_through_spark_connect(self, upstream, spark_connect_port):
        project = upstream.project
        upstream.touch_both()
        with project.env(
            LAKEHOUSE_PYTHON_SUBMISSION="spark_connect",
            LAKEHOUSE_SPARK_CONNECT_URL=f"sc://localhost:{spark_connect_port}",
        ):
            result = run_consumers(project)
        codes = {r.node.name: r.adapter_response.get("code") for r in result.result}
        assert {name: codes[name] for name in PYTHON_CONSUMERS} == {
            name: "spark_connect" for name in PYTHON_CONSUMERS
        }
        upstream.observe_row_tracking()
        assert_consumers_equal_full_recompute(upstream)

    def test_a_restored_consumer_catches_up_from_the_restored_version(
        self, upstream, local_zone_not_the_sessions
    ):
        # Restored by version, then (from there) by timestamp. A RESTORE to a timestamp names
        # it in the session's zone; the consumer finds the version it went back to from the
        # commit times it reads, on any local clock.
        project = upstream.project
        for _ in range(2):
            upstream.batch()
            upstream.touch_both()
            run_consumers(project)
            upstream.observe_row_tracking()
        for restored_to in ("version", "timestamp"):
            for name in ("fct_order_lines", "fct_daily_revenue"):
                table = project.relation(name)
                older = watermarked_versions(project, name)[1]
                point = as_of(project, table, older, restored_to)
                project.spark.sql(f"restore table {table} to {point}")
            upstream.batch()
            run_consumers(project)
            upstream.observe_row_tracking()
            assert_consumers_equal_full_recompute(upstream)

    def test_a_restored_upstream_is_caught_up_from_its_change_feed(self, upstream):
        project = upstream.project
        older = project.history("int_order_lines_deduplicated")[3].version
        upstream.sql(f"restore table {upstream.lines} to version as of {older}")
        run_consumers(project)
        upstream.observe_row_tracking()
        assert_consumers_equal_full_recompute(upstream)

    def test_row_tracking_stops_on_a_restored_upstream_and_names_the_rebuild(self, upstream):
        project = upstream.project
        older = project.history("int_orders_deduplicated")[3].version
        upstream.sql(f"restore table {upstream.orders} to version as of {older}")
        failed = project.dbt("run", "-s", "int_order_row_lineage", expect_success=False)
        message = str(project.model_results(failed)[0].message)
        assert "upstream" in message and "was restored" in message
        assert "dbt run --full-refresh -s int_order_row_lineage" in message
        run_consumers(project, "--full-refresh")
        upstream.lineage = {}  # a rebuild starts the lineage over
        upstream.observe_row_tracking()
        assert_consumers_equal_full_recompute(upstream)

    def test_a_consumer_replaced_by_a_clone_stops_and_names_the_rebuild(self, upstream):
        project = upstream.project
        target = project.relation("fct_order_lines")
        copy = project.relation("fct_order_lines_copy")
        older = watermarked_versions(project, "fct_order_lines")[1]
        upstream.sql(f"create table {copy} shallow clone {target} version as of {older}")
        # what the project's `clone` operation does with replace: true (Delta clones only
        # onto an empty table)
        upstream.sql(f"delete from {target}")
        upstream.sql(f"create or replace table {target} shallow clone {copy}")
        failed = project.dbt("run", "-s", "fct_order_lines", expect_success=False)
        message = str(project.model_results(failed)[0].message)
        assert "replaced by CLONE" in message
        assert "dbt run --full-refresh -s fct_order_lines" in message
        project.dbt("run", "-s", "fct_order_lines", "--full-refresh")
        assert_consumers_equal_full_recompute(upstream)


def as_of(project, table: str, version: int, by: str) -> str:
    """A time-travel clause to `version` of `table`: by its number, or by its commit time as
    the session shows it."""
    if by == "version":
        return f"version as of {version}"
    [commit] = (
        project.spark.sql(f"describe history {table}")
        .where(f"version = {version}")
        .selectExpr("cast(timestamp as string) as at")
        .collect()
    )
    return f"timestamp as of '{commit.at}'"


def watermarked_versions(project, name: str) -> list[int]:
    """The versions of a consumer's commits that carry a watermark, newest first."""
    return [c.version for c in project.history(name) if parse_watermark(c.userMetadata)]
