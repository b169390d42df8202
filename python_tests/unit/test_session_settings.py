"""The embedded session's Spark configuration, the profile it comes from, and the launch-error
translation, without starting a JVM."""

from __future__ import annotations

from pathlib import Path

import pytest

from dbt.adapters.sparkdelta.session import (
    DeltaRuntimeUnavailable,
    SessionSettings,
    delta_coordinates,
    delta_version,
    explain_launch_failure,
    spark_conf,
    spark_line,
)
from lakehouse.settings import PROJECT_DIR, profile_output, session_settings


def test_delta_jars_follow_the_installed_delta_spark_wheel_and_spark_line():
    version, spark = delta_version(), spark_line()
    assert delta_coordinates() == [
        f"io.delta:delta-spark_{spark}_2.13:{version}",
        f"io.delta:delta-storage:{version}",
    ]


@pytest.mark.parametrize(
    ("delta", "spark", "artifact"),
    [
        ("4.0.1", "4.0", "delta-spark_2.13"),  # Delta 4.0: one build, for Spark 4.0
        ("4.4.0", "4.0", "delta-spark_4.0_2.13"),
        ("4.4.0", "4.1", "delta-spark_4.1_2.13"),
        ("4.4.0", "4.2", "delta-spark_4.2_2.13"),
    ],
)
def test_the_delta_build_is_the_one_for_the_spark_line(delta, spark, artifact):
    assert delta_coordinates(delta, spark) == [
        f"io.delta:{artifact}:{delta}",
        f"io.delta:delta-storage:{delta}",
    ]
    conf = spark_conf(SessionSettings(home=Path("/x")))
    assert conf["spark.jars.packages"] == ",".join(delta_coordinates())


def test_a_delta_without_a_build_for_the_installed_spark_is_refused_naming_what_fits():
    with pytest.raises(
        DeltaRuntimeUnavailable,
        match=r"delta-spark 4.0.1 is built for Spark 4.0, "
        r"not for the installed pyspark's Spark 4.2: install delta-spark 4.4 ",
    ):
        delta_coordinates("4.0.1", "4.2")


def test_defaults_suit_a_small_machine_and_keep_state_under_home():
    conf = spark_conf(SessionSettings(home=Path("/data/lh")))
    assert conf["spark.master"] == "local[2]"
    assert conf["spark.sql.shuffle.partitions"] == "4"
    assert conf["spark.ui.showConsoleProgress"] == "false"
    assert conf["spark.sql.warehouse.dir"] == "/data/lh/warehouse"
    assert (
        "databaseName=/data/lh/metastore_db" in conf["spark.hadoop.javax.jdo.option.ConnectionURL"]
    )
    assert conf["spark.sql.catalog.spark_catalog"].endswith("DeltaCatalog")
    # outside UTC, no re-read of a table's whole state after every commit
    assert conf["spark.databricks.delta.allFilesInCrc.verificationMode.forceOnNonUTC.enabled"] == (
        "false"
    )
    # Hive's session resources and Spark's scratch files: in this home, not the host's /tmp.
    assert "-Djava.io.tmpdir=/data/lh/tmp" in conf["spark.driver.extraJavaOptions"]
    assert "-XX:+UseParallelGC" in conf["spark.driver.extraJavaOptions"]  # batch work
    assert "spark.jars.repositories" not in conf


def test_profile_fields_become_settings(tmp_path):
    settings = SessionSettings.from_profile(
        {
            "session_home": "state",
            "spark_log_level": "warn",
            "server_side_parameters": {
                "spark.sql.shuffle.partitions": 8,
                "spark.jars.repositories": "",  # empty: unset
            },
        },
        tmp_path,
    )
    assert settings.home == tmp_path / "state"
    conf = spark_conf(settings)
    assert conf["spark.sql.shuffle.partitions"] == "8"
    # the partition count sizes the other parallelism settings too
    assert conf["spark.default.parallelism"] == "8"
    assert "spark.jars.repositories" not in conf
    assert "-Dsparkdelta.log.level=warn" in conf["spark.driver.extraJavaOptions"]


def test_home_defaults_to_the_project_dir():
    assert SessionSettings.from_profile({}, "/p").home == Path("/p/.sparkdelta")


def test_the_project_profile_maps_its_environment(monkeypatch, tmp_path):
    monkeypatch.setenv("LAKEHOUSE_HOME", str(tmp_path))
    monkeypatch.setenv("LAKEHOUSE_SPARK_MASTER", "local[1]")
    monkeypatch.setenv("LAKEHOUSE_SHUFFLE_PARTITIONS", "8")
    monkeypatch.setenv("LAKEHOUSE_MAVEN_REPOSITORIES", "https://mirror.example/maven2")
    monkeypatch.setenv("LAKEHOUSE_IVY_SETTINGS", "/etc/ivysettings.xml")
    conf = spark_conf(session_settings())
    assert conf["spark.master"] == "local[1]"
    assert conf["spark.sql.shuffle.partitions"] == "8"
    assert conf["spark.sql.warehouse.dir"] == str(tmp_path / "warehouse")
    assert conf["spark.jars.repositories"] == "https://mirror.example/maven2"
    assert conf["spark.jars.ivySettings"] == "/etc/ivysettings.xml"
    assert "spark.jars.ivy" not in conf


def test_the_project_home_defaults_to_dot_lakehouse(monkeypatch):
    monkeypatch.delenv("LAKEHOUSE_HOME", raising=False)
    assert session_settings().home == PROJECT_DIR / ".lakehouse"
    assert profile_output("local")["type"] == "sparkdelta"


def test_with_conf_wins():
    settings = SessionSettings(home=Path("/x")).with_conf({"spark.sql.shuffle.partitions": "1"})
    assert spark_conf(settings)["spark.sql.shuffle.partitions"] == "1"


# What Spark 4.1's spark-submit printed here for each cause (abridged; the words matched kept).
UNRESOLVED = """:: resolving dependencies :: org.apache.spark#spark-submit-parent-348a;1.0
:: problems summary ::
:::: WARNINGS
\t\tmodule not found: io.delta#delta-storage;9.9.9
\t\t::::::::::::::::::::::::::::::::::::::::::::::
\t\t::          UNRESOLVED DEPENDENCIES         ::
\t\t::::::::::::::::::::::::::::::::::::::::::::::
\t\t:: io.delta#delta-storage;9.9.9: not found
:: USE VERBOSE OR DEBUG MESSAGE LEVEL FOR MORE DETAILS
java.lang.RuntimeException: [unresolved dependency: io.delta#delta-storage;9.9.9: not found]
\tat org.apache.spark.util.MavenUtils$.resolveMavenCoordinates(MavenUtils.scala:539)
"""
REFUSED = UNRESOLVED.replace(
    ":: USE VERBOSE",
    ":::: ERRORS\n\tServer access error at url http://127.0.0.1:9/maven2/io/delta/delta-storage/"
    "9.9.9/delta-storage-9.9.9.pom (java.net.ConnectException: Connection refused)\n:: USE VERBOSE",
)
NO_JAVA_HOME = (
    ".../pyspark/bin/spark-class: line 71: /nonexistent/bin/java: No such file or directory\n"
    ".../pyspark/bin/spark-class: line 97: CMD: bad array subscript\n"
)


def test_unresolved_jars_become_one_actionable_line():
    message = explain_launch_failure(UNRESOLVED, "/lh/logs/spark-driver.log")
    assert "\n" not in message
    assert all(coordinate in message for coordinate in delta_coordinates())
    assert "~/.m2/repository" in message and "spark.jars.ivySettings" in message
    assert "/lh/logs/spark-driver.log" in message
    assert "reached" not in message


def test_an_unreachable_repository_is_named():
    message = explain_launch_failure(REFUSED, "/log")
    assert "could not be resolved" in message
    assert "java.net.ConnectException at http://127.0.0.1:9/maven2/" in message


@pytest.mark.parametrize(
    "output",
    [
        "JAVA_HOME is not set\n",  # spark-class, no java on the PATH
        NO_JAVA_HOME,  # spark-class, JAVA_HOME naming no JDK
        "bash: java: command not found\n",
        # a log that also holds a resolver's "not found" of an earlier attempt
        "module not found: io.delta#delta-storage;9.9.9\nJAVA_HOME is not set\n",
    ],
)
def test_missing_java_is_named_not_read_as_unresolved_jars(output):
    message = explain_launch_failure(output, "/log")
    assert "JDK 17" in message and "could not be resolved" not in message


@pytest.mark.parametrize("output", ["not found\n", "", "Error: file not found: app.py\n"])
def test_other_words_are_not_read_as_unresolved_jars(output):
    message = explain_launch_failure(output, "/log")
    assert message.startswith("Spark could not start (") and "Delta Lake jars" not in message


def test_unknown_failure_quotes_the_last_line():
    message = explain_launch_failure("something odd\nError: bad option --foo\n\n", "/log")
    assert "Error: bad option --foo" in message


def test_a_warehouse_uri_is_kept_as_given(tmp_path):
    uri = "s3a://lake/warehouse"
    settings = SessionSettings.from_profile({"warehouse_dir": uri}, tmp_path)
    assert spark_conf(settings)["spark.sql.warehouse.dir"] == uri
    relative = SessionSettings.from_profile({"warehouse_dir": "tables"}, tmp_path)
    assert relative.warehouse_dir == str(tmp_path / "tables")
    # the metastore stays under the home
    assert settings.metastore_dir == (tmp_path / ".sparkdelta" / "metastore_db").resolve()


def test_a_spark_conf_file_overrides_everything(tmp_path):
    conf_file = tmp_path / "spark-defaults.conf"
    conf_file.write_text(
        "# executors of the cluster\n"
        "spark.executor.memory   8g\n"
        "spark.sql.shuffle.partitions=64\n"
        "spark.hadoop.fs.s3a.endpoint http://minio:9000\n"
    )
    settings = SessionSettings.from_profile(
        {
            "spark_conf_file": "spark-defaults.conf",
            "server_side_parameters": {"spark.sql.shuffle.partitions": "4"},
        },
        tmp_path,
    )
    conf = spark_conf(settings)
    assert conf["spark.executor.memory"] == "8g"
    assert conf["spark.sql.shuffle.partitions"] == "64"
    assert conf["spark.hadoop.fs.s3a.endpoint"] == "http://minio:9000"


def test_a_bad_spark_conf_file_is_named(tmp_path):
    with pytest.raises(DeltaRuntimeUnavailable, match=r"spark_conf_file .*missing.conf"):
        SessionSettings.from_profile({"spark_conf_file": "missing.conf"}, tmp_path)
    (tmp_path / "bad.conf").write_text("spark.master\n")
    with pytest.raises(DeltaRuntimeUnavailable, match="line 1: expected `key value`"):
        SessionSettings.from_profile({"spark_conf_file": "bad.conf"}, tmp_path)


def test_the_project_profile_maps_the_cluster_settings(monkeypatch, tmp_path):
    monkeypatch.setenv("LAKEHOUSE_HOME", str(tmp_path))
    monkeypatch.setenv("LAKEHOUSE_SPARK_MASTER", "spark://10.0.0.5:7077")
    monkeypatch.setenv("LAKEHOUSE_DRIVER_HOST", "10.0.0.9")
    monkeypatch.setenv("LAKEHOUSE_WAREHOUSE", "s3a://lake/warehouse")
    monkeypatch.setenv("LAKEHOUSE_SPARK_CORES_MAX", "8")
    conf = spark_conf(session_settings())
    assert conf["spark.master"] == "spark://10.0.0.5:7077"
    assert conf["spark.driver.host"] == "10.0.0.9"
    assert conf["spark.sql.warehouse.dir"] == "s3a://lake/warehouse"
    assert conf["spark.cores.max"] == "8"
    assert "spark.executor.memory" not in conf  # unset: Spark's default


def test_a_home_whose_metastore_names_another_warehouse_is_refused(tmp_path):
    from dbt.adapters.sparkdelta.session import SessionHomeMismatch, check_home_not_copied

    warehouse = tmp_path / "home" / "warehouse"
    # the same place, spelled as Spark and as the settings spell it
    check_home_not_copied(f"file:{warehouse}", f"{warehouse}/", tmp_path / "metastore_db")
    check_home_not_copied("s3a://bucket/warehouse/", "s3a://bucket/warehouse", tmp_path)
    with pytest.raises(SessionHomeMismatch) as refused:
        check_home_not_copied("file:/old/home/warehouse", str(warehouse), tmp_path / "m")
    message = str(refused.value)
    assert "/old/home/warehouse" in message and str(warehouse) in message
    assert "LAKEHOUSE" not in message  # the adapter does not name the project's settings
