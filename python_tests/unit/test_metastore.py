"""The shared metastore's settings, the profile's mapping, the adapter's checks and the local
server's refusals, without starting a JVM or a database."""

from __future__ import annotations

import io
import os
import stat
import subprocess
import sys
from contextlib import redirect_stdout
from unittest import mock

import pytest

from dbt.adapters.sparkdelta.session import (
    METASTORE_PASSWORD,
    METASTORE_URL,
    MetastoreUnavailable,
    check_class_path,
    external_metastore_url,
    is_secret,
    redact_jdbc_url,
    spark_conf,
)
from lakehouse import cli, endpoint, metastore
from lakehouse.settings import session_settings

METASTORE_ENV = (
    "LAKEHOUSE_METASTORE_URL",
    "LAKEHOUSE_METASTORE_USER",
    "LAKEHOUSE_METASTORE_PASSWORD",
    "LAKEHOUSE_METASTORE_DRIVER",
    "LAKEHOUSE_METASTORE_DRIVER_CLASS",
    "LAKEHOUSE_METASTORE_PORT",
    "LAKEHOUSE_METASTORE_BIND_HOST",
)


@pytest.fixture(autouse=True)
def clean_environment(monkeypatch, tmp_path):
    for name in METASTORE_ENV:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("LAKEHOUSE_HOME", str(tmp_path / "home"))


def test_no_url_keeps_the_embedded_derby():
    settings = session_settings()
    assert not [key for key in settings.conf if "jdo" in key or "extraClassPath" in key]
    conf = spark_conf(settings)
    assert conf[METASTORE_URL].startswith("jdbc:derby:;databaseName=")
    assert external_metastore_url(conf) is None
    assert "spark.driver.extraClassPath" not in conf


def test_url_maps_to_hive_settings_and_the_driver_jar(monkeypatch):
    url = "jdbc:postgresql://db.example:5432/metastore"
    monkeypatch.setenv("LAKEHOUSE_METASTORE_URL", url)
    monkeypatch.setenv("LAKEHOUSE_METASTORE_USER", "hive")
    monkeypatch.setenv("LAKEHOUSE_METASTORE_PASSWORD", "from-the-environment")
    conf = spark_conf(session_settings())
    # the user's URL wins over the embedded Derby's
    assert conf[METASTORE_URL] == url
    assert external_metastore_url(conf) == url
    assert conf["spark.hadoop.javax.jdo.option.ConnectionDriverName"] == "org.postgresql.Driver"
    assert conf["spark.hadoop.javax.jdo.option.ConnectionUserName"] == "hive"
    assert conf[METASTORE_PASSWORD] == "from-the-environment"
    assert conf["spark.driver.extraClassPath"] == metastore.DEFAULT_DRIVER
    assert "postgresql" not in conf.get("spark.jars", "")  # never shipped to executors

    monkeypatch.setenv("LAKEHOUSE_METASTORE_DRIVER", "/opt/jdbc/pg.jar")
    assert spark_conf(session_settings())["spark.driver.extraClassPath"] == "/opt/jdbc/pg.jar"


def test_endpoint_joins_the_driver_jar_with_the_delta_jars(monkeypatch):
    monkeypatch.setenv("LAKEHOUSE_METASTORE_URL", "jdbc:postgresql://127.0.0.1:5433/metastore")
    settings = endpoint.EndpointSettings.from_env()
    entries = endpoint.endpoint_conf(settings)["spark.driver.extraClassPath"].split(os.pathsep)
    assert entries == [*map(str, endpoint.delta_jars(settings)), metastore.DEFAULT_DRIVER]


def test_endpoint_passes_passwords_in_a_private_file_not_on_its_command_line(monkeypatch):
    monkeypatch.setenv("LAKEHOUSE_METASTORE_URL", "jdbc:postgresql://127.0.0.1:5433/metastore")
    monkeypatch.setenv("LAKEHOUSE_METASTORE_PASSWORD", " pass\\word=1")
    settings = endpoint.EndpointSettings.from_env()
    command = endpoint.spark_submit_command(settings)
    assert not [part for part in command if "pass\\word" in part]
    secret = settings.secret_file
    assert command[command.index("--properties-file") + 1] == str(secret)
    assert stat.S_IMODE(secret.stat().st_mode) == 0o600
    assert secret.read_text() == f"{METASTORE_PASSWORD}=\\ pass\\\\word=1\n"
    endpoint.stop(settings)  # not running: still removes the file
    assert not secret.exists()


def test_schema_init_keeps_the_password_off_its_jvm_command_line(monkeypatch, tmp_path):
    """`lakehouse metastore init`'s JVM: PySpark puts the settings it is launched with on
    spark-submit's command line; the password must not be among them."""
    from pyspark import java_gateway

    from lakehouse.metastore import hive

    for name, value in {
        "LAKEHOUSE_METASTORE_URL": "jdbc:postgresql://127.0.0.1:5433/metastore",
        "LAKEHOUSE_METASTORE_USER": "hive",
        "LAKEHOUSE_METASTORE_PASSWORD": "pass word=1",
        "LAKEHOUSE_METASTORE_DRIVER": str(tmp_path / "postgresql.jar"),
        "LAKEHOUSE_INIT_HOME": str(tmp_path / "init"),
        "LAKEHOUSE_INIT_WAREHOUSE": str(tmp_path / "warehouse"),
    }.items():
        monkeypatch.setenv(name, value)
    launched = []

    def launch_gateway(conf, **kwargs):
        launched.append(dict(conf.getAll()))
        raise RuntimeError("no JVM in a unit test")

    monkeypatch.setattr(java_gateway, "launch_gateway", launch_gateway)
    with pytest.raises(RuntimeError, match="no JVM"):
        hive._init_schema_here()
    [conf] = launched
    assert conf["spark.hadoop.javax.jdo.option.ConnectionUserName"] == "hive"
    assert not [key for key, value in conf.items() if "pass word" in value or is_secret(key)]


def test_without_secrets_the_endpoint_has_no_properties_file():
    command = endpoint.spark_submit_command(endpoint.EndpointSettings.from_env())
    assert "--properties-file" not in command


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("jdbc:postgresql://h:5432/m", "jdbc:postgresql://h:5432/m"),
        ("jdbc:postgresql://h/m?user=u&password=s3cret&ssl=true", "password=***&ssl=true"),
        ("jdbc:mysql://u:s3cret@h/m", "jdbc:mysql://u:***@h/m"),
        ("jdbc:sqlserver://h;user=u;password=s3cret;db=m", "password=***;db=m"),
    ],
)
def test_urls_in_messages_never_show_a_password(url, shown):
    redacted = redact_jdbc_url(url)
    assert "s3cret" not in redacted
    assert shown in redacted


def test_secret_settings_are_recognised():
    assert is_secret(METASTORE_PASSWORD)
    assert is_secret("spark.hadoop.fs.s3a.secret.key")
    assert not is_secret(METASTORE_URL)


def test_missing_driver_jar_is_named(tmp_path):
    conf = {
        METASTORE_URL: "jdbc:postgresql://h/m?password=s3cret",
        "spark.driver.extraClassPath": f"{tmp_path}/absent.jar",
    }
    with pytest.raises(MetastoreUnavailable, match="absent.jar, which does not exist") as error:
        check_class_path(conf)
    assert "s3cret" not in str(error.value)
    (tmp_path / "absent.jar").write_text("")
    check_class_path(conf)


def test_cli_names_the_project_settings_for_a_metastore_error(monkeypatch):
    monkeypatch.setenv("LAKEHOUSE_METASTORE_URL", "jdbc:postgresql://127.0.0.1:1/metastore")
    monkeypatch.setenv("LAKEHOUSE_METASTORE_DRIVER", "/nonexistent/postgresql.jar")
    # A process of its own: in this one, an earlier test's SparkSession would be reused.
    result = subprocess.run(
        [sys.executable, "-c", "from lakehouse import cli; raise SystemExit(cli.main(['load']))"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 2, result.stdout + result.stderr
    assert "/nonexistent/postgresql.jar, which does not exist" in result.stderr
    assert "LAKEHOUSE_METASTORE_DRIVER" in result.stderr


def test_local_settings_from_the_environment(monkeypatch, tmp_path):
    settings = metastore.MetastoreSettings.from_env()
    assert settings.port == metastore.DEFAULT_PORT
    assert settings.local_url == "jdbc:postgresql://127.0.0.1:5433/metastore"
    assert settings.directory == tmp_path / "home" / "metastore-pg"
    assert not settings.serves_other_hosts
    monkeypatch.setenv("LAKEHOUSE_METASTORE_BIND_HOST", "10.0.0.7")
    other_hosts = metastore.MetastoreSettings.from_env()
    assert other_hosts.local_url == "jdbc:postgresql://10.0.0.7:5433/metastore"
    assert other_hosts.serves_other_hosts
    monkeypatch.setenv("LAKEHOUSE_METASTORE_PORT", "five")
    with pytest.raises(metastore.MetastoreError, match="LAKEHOUSE_METASTORE_PORT"):
        metastore.MetastoreSettings.from_env()


def test_exports_name_the_password_file_not_the_password(monkeypatch):
    settings = metastore.MetastoreSettings.from_env()
    lines = metastore.exports(settings).splitlines()
    assert lines[0] == f"export LAKEHOUSE_METASTORE_URL={settings.local_url}"
    assert f'LAKEHOUSE_METASTORE_PASSWORD="$(cat {settings.password_file})"' in lines[2]
    monkeypatch.setenv("LAKEHOUSE_METASTORE_PASSWORD", "s3cret-value")
    assert "s3cret-value" not in metastore.exports(metastore.MetastoreSettings.from_env())


def test_missing_packages_are_named(monkeypatch, tmp_path):
    monkeypatch.setattr(metastore.server.glob, "glob", lambda pattern: [])
    with pytest.raises(metastore.MetastoreError, match="apt-get install -y postgresql"):
        metastore.server_binaries()
    with pytest.raises(metastore.MetastoreError, match="libpostgresql-jdbc-java"):
        metastore.check_driver(tmp_path / "postgresql.jar")


def test_init_needs_a_url(capsys):
    assert cli.main(["metastore", "init"]) == 2
    assert "Set LAKEHOUSE_METASTORE_URL" in capsys.readouterr().err


def test_hive_metadata_lists_every_table_hive_needs():
    classes = metastore.metadata_classes()
    assert "org.apache.hadoop.hive.metastore.model.MTable" in classes
    tables = metastore.metadata_tables()
    assert {"TBLS", "DBS", "SDS", "COLUMNS_V2", "PARTITIONS", "VERSION", "FUNCS"} <= tables
    # classes stored inside another's table (MOrder, MResourceUri) have none of their own
    assert not {"SORT_ORDER", "RESOURCE_URI"} & tables


def test_start_and_status_count_the_same_tables(monkeypatch, tmp_path):
    """`start` counted Hive's metadata tables (44) and `status` every table PostgreSQL lists
    (45: DataNucleus's SEQUENCE_TABLE too). Both now say it through describe_tables: how many
    of Hive's metadata tables are there, and which other tables.

    `start` runs for real on an already running server, down to its schema child's own code
    (`_init_schema_here`, run in this process); only the edges are fakes: the server's pid,
    psql, the child process, and the child's JVM gateway and JDBC connection, all of which see
    the same database tables."""
    hive_tables = metastore.metadata_tables()
    listed = [*sorted(hive_tables), "SEQUENCE_TABLE"]
    said = f"{len(hive_tables)} of {len(hive_tables)} Hive metadata tables, plus SEQUENCE_TABLE"
    assert metastore.describe_tables(listed) == said
    assert metastore.describe_tables(listed[1:]).startswith(f"{len(hive_tables) - 1} of ")

    driver = tmp_path / "postgresql.jar"
    driver.write_bytes(b"")
    monkeypatch.setenv("LAKEHOUSE_METASTORE_DRIVER", str(driver))
    settings = metastore.MetastoreSettings.from_env()
    settings.directory.mkdir(parents=True)
    server, hive = metastore.server, metastore.hive
    monkeypatch.setattr(server, "server_binaries", lambda: tmp_path / "bin")
    monkeypatch.setattr(server, "server_pid", lambda settings: 4242)

    def psql(settings, sql: str, database: str = "postgres") -> str:
        # the role and the database exist; the metastore database's tables are `listed`
        return "\n".join(listed) if "information_schema.tables" in sql else "1"

    monkeypatch.setattr(server, "_psql", psql)

    class Connection:
        def close(self) -> None:
            pass

    import pyspark.java_gateway

    class Gateway:
        jvm = None  # used only through the faked JDBC connection and table listing below

    monkeypatch.setattr(pyspark.java_gateway, "launch_gateway", lambda conf: Gateway())
    monkeypatch.setattr(hive, "_jdbc_connection", lambda *args: Connection())
    monkeypatch.setattr(hive, "_tables", lambda gateway, connection: set(listed))
    monkeypatch.setattr(hive, "_schema_version", lambda connection: hive.HIVE_SCHEMA_VERSION)

    def child(command, env, stdout, stderr, timeout):
        """`python -m lakehouse.metastore --init-schema`, in this process."""
        assert command[1:] == ["-m", "lakehouse.metastore", "--init-schema"]
        out = io.StringIO()
        with mock.patch.dict(os.environ, env, clear=True), redirect_stdout(out):
            code = hive._init_schema_here()
        return subprocess.CompletedProcess(command, code, out.getvalue().encode())

    monkeypatch.setattr(subprocess, "run", child)  # start runs no other process here

    started = metastore.start(settings).splitlines()[0]
    assert started.startswith("# already running (pid 4242): ")
    assert f"schema {hive.HIVE_SCHEMA_VERSION} already there: {said};" in started
    healthy, line = metastore.status(settings)
    assert healthy and f", {said};" in line
