"""The Spark configuration and the launch-error translation, without starting a JVM."""

from __future__ import annotations

from pathlib import Path

from lakehouse.spark import (
    LakehouseSettings,
    delta_coordinates,
    delta_version,
    explain_launch_failure,
    spark_conf,
)


def test_delta_jars_follow_the_installed_delta_spark_wheel():
    version = delta_version()
    assert delta_coordinates() == [
        f"io.delta:delta-spark_2.13:{version}",
        f"io.delta:delta-storage:{version}",
    ]
    conf = spark_conf(LakehouseSettings(home=Path("/x")))
    assert conf["spark.jars.packages"] == ",".join(delta_coordinates())


def test_defaults_suit_a_small_machine_and_keep_state_under_home():
    conf = spark_conf(LakehouseSettings(home=Path("/data/lh")))
    assert conf["spark.master"] == "local[2]"
    assert conf["spark.sql.shuffle.partitions"] == "4"
    assert conf["spark.ui.showConsoleProgress"] == "false"
    assert conf["spark.sql.warehouse.dir"] == "/data/lh/warehouse"
    assert (
        "databaseName=/data/lh/metastore_db" in conf["spark.hadoop.javax.jdo.option.ConnectionURL"]
    )
    assert conf["spark.sql.catalog.spark_catalog"].endswith("DeltaCatalog")
    assert "spark.jars.repositories" not in conf


def test_environment_overrides(monkeypatch, tmp_path):
    monkeypatch.setenv("LAKEHOUSE_HOME", str(tmp_path))
    monkeypatch.setenv("LAKEHOUSE_SPARK_MASTER", "local[1]")
    monkeypatch.setenv("LAKEHOUSE_SHUFFLE_PARTITIONS", "8")
    monkeypatch.setenv("LAKEHOUSE_MAVEN_REPOSITORIES", "https://mirror.example/maven2")
    monkeypatch.setenv("LAKEHOUSE_IVY_SETTINGS", "/etc/ivysettings.xml")
    conf = spark_conf(LakehouseSettings.from_env("/ignored"))
    assert conf["spark.master"] == "local[1]"
    assert conf["spark.sql.shuffle.partitions"] == "8"
    assert conf["spark.sql.warehouse.dir"] == str(tmp_path / "warehouse")
    assert conf["spark.jars.repositories"] == "https://mirror.example/maven2"
    assert conf["spark.jars.ivySettings"] == "/etc/ivysettings.xml"


def test_home_defaults_to_the_project_dir(monkeypatch, tmp_path):
    monkeypatch.delenv("LAKEHOUSE_HOME", raising=False)
    assert LakehouseSettings.from_env(tmp_path).home == tmp_path / ".lakehouse"


def test_extra_conf_wins():
    settings = LakehouseSettings(home=Path("/x"), extra_conf={"spark.sql.shuffle.partitions": "1"})
    assert spark_conf(settings)["spark.sql.shuffle.partitions"] == "1"


def test_unresolved_jars_become_one_actionable_line():
    ivy_output = (
        ":: UNRESOLVED DEPENDENCIES ::\n:: io.delta#delta-spark_2.13;4.0.1: not found\n"
        'Exception in thread "main" java.lang.RuntimeException: [unresolved dependency: ...]\n'
        "\tat org.apache.spark.util.MavenUtils$.resolveMavenCoordinates(MavenUtils.scala:540)\n"
    )
    message = explain_launch_failure(ivy_output, "/lh/logs/spark-driver.log")
    assert "\n" not in message
    assert all(coordinate in message for coordinate in delta_coordinates())
    assert "~/.m2/repository" in message and "LAKEHOUSE_IVY_SETTINGS" in message
    assert "/lh/logs/spark-driver.log" in message


def test_missing_java_is_named():
    message = explain_launch_failure("JAVA_HOME is not set\n", "/log")
    assert "JDK 17" in message


def test_unknown_failure_quotes_the_last_line():
    message = explain_launch_failure("something odd\nError: bad option --foo\n\n", "/log")
    assert "Error: bad option --foo" in message
