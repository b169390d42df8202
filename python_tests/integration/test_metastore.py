"""A shared Hive metastore on PostgreSQL (`lakehouse metastore start`), with several Spark
processes on it at once: the endpoint, embedded dbt runs (each a separate OS process with its
own JVM) and a Thrift client. Effects are checked on the catalog and the tables' rows.

Needs Debian's postgresql and libpostgresql-jdbc-java (skipped with the reason otherwise) and
the Delta jars. Every Spark process gets a 1g driver and local[1]: five JVMs share the machine.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from lakehouse import endpoint, metastore
from lakehouse.dbt_runner import environment
from python_tests.conftest import (
    endpoint_env,
    free_port,
    running_test_endpoint,
    unique_schema,
)

pytestmark = pytest.mark.metastore

# Derby keeps a view's text in a LONG VARCHAR of at most 32,700 characters.
DERBY_TEXT_LIMIT = 32_700
WRITERS = 4

PROJECT_YML = """
name: shared_metastore
version: "0.1.0"
config-version: 2
profile: lakehouse
flags:
  send_anonymous_usage_stats: false
"""

MODELS = {
    # rows: how many ids this process writes (each process its own count)
    "numbers.sql": """
{{ config(materialized='table') }}
select id, id * 2 as doubled from range({{ var('rows') }})
""",
    "numbers_merged.sql": """
{{ config(materialized='incremental', incremental_strategy='merge', unique_key='id') }}
select id, doubled from {{ ref('numbers') }}
""",
    "numbers_summary.sql": """
{{ config(materialized='view') }}
select count(*) as n, sum(doubled) as total from {{ ref('numbers_merged') }}
""",
    # a table another client made: `source_table` names it
    "copied.sql": """
{{ config(materialized='table') }}
select * from {{ var('source_table', 'range(0)') }}
""",
}


def _require_packages() -> None:
    try:
        metastore.server_binaries()
        metastore.check_driver(Path(metastore.DEFAULT_DRIVER))
    except metastore.MetastoreError as exc:
        pytest.skip(str(exc))


@pytest.fixture(scope="module")
def shared(tmp_path_factory):
    """A local PostgreSQL metastore, and the environment every process of these tests shares:
    its URL and credentials, one warehouse, a small driver."""
    _require_packages()
    # PostgreSQL runs as `postgres` when the tests run as root: its directory must be
    # reachable by that account, which pytest's private temporary directory is not.
    home = Path(tempfile.mkdtemp(prefix="lakehouse-metastore-"))
    home.chmod(0o755)
    base = {
        "LAKEHOUSE_HOME": str(home / "server"),
        "LAKEHOUSE_METASTORE_PORT": str(free_port()),
        "LAKEHOUSE_METASTORE_PASSWORD": "",
    }
    with environment(base):
        settings = metastore.MetastoreSettings.from_env()
    started = time.monotonic()
    print(f"\nmetastore: {metastore.start(settings).splitlines()[0]}")
    print(f"metastore: started and initialised in {time.monotonic() - started:.0f}s")
    env = {
        "LAKEHOUSE_TARGET": "local",
        "LAKEHOUSE_METASTORE_URL": settings.local_url,
        "LAKEHOUSE_METASTORE_USER": settings.user,
        "LAKEHOUSE_METASTORE_PASSWORD": settings.local_password(),
        "LAKEHOUSE_WAREHOUSE": str(home / "warehouse"),
        "LAKEHOUSE_DRIVER_MEMORY": "1g",
        "LAKEHOUSE_SPARK_MASTER": "local[1]",
        "LAKEHOUSE_SHUFFLE_PARTITIONS": "1",
    }
    yield {"settings": settings, "env": env, "home": home}
    metastore.stop(settings)
    shutil.rmtree(home, ignore_errors=True)


@pytest.fixture(scope="module")
def project(shared) -> Path:
    directory = shared["home"] / "project"
    (directory / "models").mkdir(parents=True)
    (directory / "dbt_project.yml").write_text(PROJECT_YML)
    for name, sql in MODELS.items():
        (directory / "models" / name).write_text(sql)
    return directory


@pytest.fixture(scope="module")
def running_endpoint(shared, tmp_path_factory):
    # Its home in the tests' shared directory, removed with it.
    env = endpoint_env(tmp_path_factory, home=shared["home"] / "endpoint", **shared["env"])
    with running_test_endpoint(env) as settings:
        yield settings


class Thrift:
    """A HiveServer2 client of the endpoint (pyhive), one connection per statement batch."""

    def __init__(self, settings: endpoint.EndpointSettings):
        self.settings = settings

    def run(self, *statements: str) -> list:
        from pyhive import hive

        connection = hive.connect(
            host=self.settings.client_host, port=self.settings.thrift_port, username="lakehouse"
        )
        try:
            cursor = connection.cursor()
            rows: list = []
            for statement in statements:
                cursor.execute(statement)
                rows = cursor.fetchall() if cursor.description else []
            return rows
        finally:
            connection.close()

    def tables(self, schema: str) -> set[str]:
        return {row[1] for row in self.run(f"show tables in {schema}")}


@pytest.fixture(scope="module")
def thrift(running_endpoint) -> Thrift:
    return Thrift(running_endpoint)


def dbt_process(shared, project: Path, name: str, schema: str, *args: str) -> subprocess.Popen:
    """`dbt <args>` in an OS process of its own (its own Spark JVM, embedded `session` target),
    on the shared metastore and warehouse; output in <home>/<name>/dbt.out."""
    work = shared["home"] / name
    work.mkdir(parents=True, exist_ok=True)
    env = {
        **os.environ,
        **shared["env"],
        "LAKEHOUSE_HOME": str(work / "home"),
        "LAKEHOUSE_SCHEMA": schema,
        # An Ivy cache each: several resolutions at once in one cache trip over its locks.
        "LAKEHOUSE_IVY_CACHE": str(work / "ivy"),
    }
    dbt = Path(sys.executable).with_name("dbt")
    command = [str(dbt), *args, "--project-dir", str(project)]
    command += ["--profiles-dir", str(Path(__file__).resolve().parents[2])]
    command += ["--target-path", str(work / "target"), "--log-path", str(work / "logs")]
    with open(work / "dbt.out", "ab") as out:
        return subprocess.Popen(command, env=env, stdout=out, stderr=subprocess.STDOUT)


def finish(shared, process: subprocess.Popen, name: str, timeout: float = 900) -> None:
    code = process.wait(timeout=timeout)
    output = (shared["home"] / name / "dbt.out").read_text()
    assert code == 0, f"dbt process {name} failed (exit {code}):\n{output[-4000:]}"


def count(thrift: Thrift, relation: str) -> int:
    return thrift.run(f"select count(*) from {relation}")[0][0]


class TestEndpointAndEmbeddedDbtShareOneCatalog:
    def test_each_sees_the_others_tables(self, shared, project, thrift):
        thrift_schema, dbt_schema = unique_schema("ms_thrift"), unique_schema("ms_embedded")
        # The Thrift client makes a table while the endpoint runs ...
        thrift.run(
            f"create schema {thrift_schema}",
            f"create table {thrift_schema}.made_by_thrift (id bigint, name string) using delta",
            f"insert into {thrift_schema}.made_by_thrift select id, concat('n', id) from range(37)",
        )
        # ... and an embedded dbt process, while the endpoint runs, builds models and copies it.
        variables = f"{{rows: 250, source_table: {thrift_schema}.made_by_thrift}}"
        process = dbt_process(shared, project, "embedded", dbt_schema, "build", "--vars", variables)
        finish(shared, process, "embedded")
        # The endpoint sees what dbt made, with its rows; dbt saw what Thrift made.
        assert {"numbers", "numbers_merged", "numbers_summary", "copied"} <= thrift.tables(
            dbt_schema
        )
        assert count(thrift, f"{dbt_schema}.numbers_merged") == 250
        assert thrift.run(f"select n, total from {dbt_schema}.numbers_summary") == [
            (250, 2 * sum(range(250)))
        ]
        assert count(thrift, f"{dbt_schema}.copied") == 37
        assert thrift.run(f"select max(name) from {dbt_schema}.copied") == [("n9",)]
        detail = thrift.run(f"describe detail {dbt_schema}.numbers_merged")[0]
        assert detail[0] == "delta"


class TestConcurrentDbtProcesses:
    def test_four_writers_at_once_lose_nothing(self, shared, project, thrift):
        schemas = [unique_schema(f"ms_writer{i}") for i in range(WRITERS)]
        started = time.monotonic()
        processes = [
            dbt_process(
                shared,
                project,
                f"writer{i}",
                schema,
                "build",
                "--select",
                "numbers+",
                "--vars",
                f"{{rows: {100 * (i + 1)}}}",
            )
            for i, schema in enumerate(schemas)
        ]
        for i, process in enumerate(processes):
            finish(shared, process, f"writer{i}")
        print(f"\n{WRITERS} dbt processes at once: {time.monotonic() - started:.0f}s")
        for i, schema in enumerate(schemas):
            rows = 100 * (i + 1)
            assert {"numbers", "numbers_merged", "numbers_summary"} <= thrift.tables(schema)
            assert count(thrift, f"{schema}.numbers") == rows
            assert count(thrift, f"{schema}.numbers_merged") == rows
            assert thrift.run(f"select n, total from {schema}.numbers_summary") == [
                (rows, 2 * sum(range(rows)))
            ]
        # a second round of all four at once: incremental merges on the shared catalog
        processes = [
            dbt_process(
                shared,
                project,
                f"writer{i}",
                schema,
                "run",
                "--select",
                "numbers_merged",
                "--vars",
                f"{{rows: {100 * (i + 1)}}}",
            )
            for i, schema in enumerate(schemas)
        ]
        for i, process in enumerate(processes):
            finish(shared, process, f"writer{i}")
        for i, schema in enumerate(schemas):
            assert count(thrift, f"{schema}.numbers_merged") == 100 * (i + 1)
            history = thrift.run(f"describe history {schema}.numbers_merged")
            assert [row[4] for row in history][:1] == ["MERGE"]


def long_view_sql(relation: str, source: str) -> str:
    columns = ", ".join(f"id + {i} as column_number_{i:05d}" for i in range(1500))
    sql = f"create view {relation} as select id, {columns} from {source}"
    assert len(sql) > DERBY_TEXT_LIMIT + 10_000
    return sql


class TestLongViewText:
    def test_view_longer_than_derbys_limit(self, thrift):
        schema = unique_schema("ms_views")
        thrift.run(
            f"create schema {schema}",
            f"create table {schema}.base using delta as select id from range(5)",
            long_view_sql(f"{schema}.wide", f"{schema}.base"),
        )
        assert thrift.run(f"select count(*), max(column_number_01499) from {schema}.wide") == [
            (5, 4 + 1499)
        ]
        # the metastore gives the whole text back
        [(statement,)] = thrift.run(f"show create table {schema}.wide")
        assert len(statement) > DERBY_TEXT_LIMIT and "column_number_01499" in statement

    def test_derby_refuses_it(self, spark):
        """The embedded Derby metastore of the pytest session (the default)."""
        from pyspark.errors import AnalysisException

        schema = unique_schema("derby_views")
        spark.sql(f"create schema {schema}")
        spark.sql(f"create table {schema}.base using delta as select id from range(5)")
        with pytest.raises(AnalysisException, match="VIEW_EXPANDED_TEXT"):
            spark.sql(long_view_sql(f"{schema}.wide", f"{schema}.base"))
        assert not spark.catalog.tableExists(f"{schema}.wide")
