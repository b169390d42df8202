"""The endpoint's launch settings and its refusals, without starting Spark."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from dbt.adapters.sparkdelta.session import SessionSettings, spark_conf
from lakehouse import endpoint
from lakehouse.processes import ProcessError


@pytest.fixture
def settings(tmp_path, monkeypatch) -> endpoint.EndpointSettings:
    monkeypatch.setenv("LAKEHOUSE_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("LAKEHOUSE_THRIFT_PORT", "10123")
    monkeypatch.setenv("LAKEHOUSE_SPARK_CONNECT_PORT", "15123")
    return endpoint.EndpointSettings.from_env()


def test_conf_is_the_lakehouse_conf_plus_both_endpoints_on_localhost(settings):
    conf = endpoint.endpoint_conf(settings)
    embedded = spark_conf(settings.session)
    own = {"spark.app.name", "spark.driver.extraClassPath"}
    assert {k: v for k, v in conf.items() if k in embedded and k not in own} == {
        k: v for k, v in embedded.items() if k not in own
    }
    assert conf["spark.plugins"] == endpoint.CONNECT_PLUGIN
    assert conf["spark.connect.grpc.binding.port"] == "15123"
    assert conf["spark.hadoop.hive.server2.thrift.port"] == "10123"
    assert conf["spark.connect.grpc.binding.address"] == "localhost"
    assert conf["spark.hadoop.hive.server2.thrift.bind.host"] == "localhost"
    assert all(
        jar.name in conf["spark.driver.extraClassPath"] for jar in endpoint.delta_jars(settings)
    )
    assert settings.pid_file.parent == settings.session.home / "endpoint"
    # HiveServer2's operation logs stay in this endpoint's home (two endpoints on one host).
    assert conf["spark.hadoop.hive.server2.logging.operation.log.location"] == str(
        settings.session.home / "endpoint" / "operation_logs"
    )


def test_command_runs_the_thrift_server_class(settings):
    command = endpoint.spark_submit_command(settings)
    assert command[0].endswith("spark-submit")
    assert command[1:3] == ["--class", endpoint.THRIFT_SERVER_CLASS]
    assert "hive.server2.thrift.port=10123" in command


def test_taken_port_is_refused_before_launch(settings):
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", settings.thrift_port))
        busy.listen()
        with pytest.raises(ProcessError, match="10123 is already in use.*LAKEHOUSE_THRIFT_PORT"):
            endpoint.start(settings, timeout=1)
    assert not settings.pid_file.exists()


def test_missing_java_is_explained(settings, monkeypatch):
    monkeypatch.delenv("JAVA_HOME", raising=False)
    monkeypatch.setenv("PATH", "/nonexistent")
    with pytest.raises(ProcessError, match="Java not found"):
        endpoint.start(settings, timeout=1)


def test_status_and_stop_when_not_running(settings):
    assert endpoint.status(settings) == (False, "not running")
    assert endpoint.stop(settings) == "not running"


def test_settings_defaults():
    defaults = endpoint.EndpointSettings(session=SessionSettings(home=Path("/x")))
    assert (defaults.thrift_port, defaults.connect_port) == (10000, 15002)


def test_spark_errors_are_cut_to_their_sentence():
    from dbt.adapters.sparkdelta.errors import short_error_message

    thrift = (
        "TExecuteStatementResp(status=TStatus(statusCode=3, infoMessages=['*org.apache.hive."
        "service.cli.HiveSQLException:Error running query: [EXPECT_TABLE_NOT_VIEW.NO_ALTERNATIVE]"
        " org.apache.spark.sql.AnalysisException: [EXPECT_TABLE_NOT_VIEW.NO_ALTERNATIVE] "
        "'DESCRIBE DETAIL' expects a table but `s`.`v` is a view. SQLSTATE: 42809:36:35', 'org"
    )
    assert short_error_message(thrift) == (
        "[EXPECT_TABLE_NOT_VIEW.NO_ALTERNATIVE] 'DESCRIBE DETAIL' expects a table but `s`.`v` "
        "is a view. SQLSTATE: 42809"
    )


def test_bind_host_opens_the_endpoint_to_other_hosts(monkeypatch, tmp_path):
    monkeypatch.setenv("LAKEHOUSE_HOME", str(tmp_path))
    monkeypatch.setenv("LAKEHOUSE_BIND_HOST", "0.0.0.0")
    settings = endpoint.EndpointSettings.from_env()
    conf = endpoint.endpoint_conf(settings)
    assert conf["spark.connect.grpc.binding.address"] == "0.0.0.0"
    assert "hive.server2.thrift.bind.host=0.0.0.0" in endpoint.spark_submit_command(settings)
    # a client on this host still reaches it by localhost
    assert settings.connect_url == "sc://localhost:15002"


def test_listening_beyond_loopback_needs_authentication(monkeypatch, tmp_path):
    monkeypatch.setenv("LAKEHOUSE_HOME", str(tmp_path))
    monkeypatch.setenv("LAKEHOUSE_BIND_HOST", "0.0.0.0")
    with pytest.raises(ProcessError, match="accepts anyone.*LAKEHOUSE_THRIFT_AUTH=LDAP"):
        endpoint.start(endpoint.EndpointSettings.from_env(), timeout=1)
    monkeypatch.setenv("LAKEHOUSE_THRIFT_AUTH", "ldap")
    with pytest.raises(ProcessError, match="LAKEHOUSE_LDAP_URL"):
        endpoint.endpoint_conf(endpoint.EndpointSettings.from_env())
    monkeypatch.setenv("LAKEHOUSE_LDAP_URL", "ldap://directory:389")
    monkeypatch.setenv("LAKEHOUSE_LDAP_BASE_DN", "ou=people,dc=example,dc=com")
    with pytest.raises(ProcessError, match="Spark Connect side accepts anyone.*CONNECT_TOKEN"):
        endpoint.check_exposure(endpoint.EndpointSettings.from_env())
    monkeypatch.setenv("LAKEHOUSE_CONNECT_TOKEN", "a-token-for-this-test")
    settings = endpoint.EndpointSettings.from_env()
    endpoint.check_exposure(settings)
    conf = endpoint.endpoint_conf(settings)
    assert conf["spark.hadoop.hive.server2.authentication"] == "LDAP"
    assert conf["spark.hadoop.hive.server2.authentication.ldap.url"] == "ldap://directory:389"
    monkeypatch.setenv("LAKEHOUSE_THRIFT_AUTH", "KERBEROS")
    with pytest.raises(ProcessError, match="supports NONE and LDAP"):
        endpoint.endpoint_conf(endpoint.EndpointSettings.from_env())


def test_connect_can_listen_on_loopback_behind_a_proxy(monkeypatch, tmp_path):
    """Thrift on the host's address, Connect on loopback for a TLS proxy on the same host."""
    monkeypatch.setenv("LAKEHOUSE_HOME", str(tmp_path))
    monkeypatch.setenv("LAKEHOUSE_BIND_HOST", "10.0.0.5")
    monkeypatch.setenv("LAKEHOUSE_CONNECT_BIND_HOST", "127.0.0.1")
    settings = endpoint.EndpointSettings.from_env()
    conf = endpoint.endpoint_conf(settings)
    assert conf["spark.connect.grpc.binding.address"] == "127.0.0.1"
    assert conf["spark.hadoop.hive.server2.thrift.bind.host"] == "10.0.0.5"
    assert settings.connect_url == "sc://127.0.0.1:15002"
    assert settings.client_host == "10.0.0.5"


def test_connect_alone_beyond_loopback_needs_authentication(monkeypatch, tmp_path):
    monkeypatch.setenv("LAKEHOUSE_HOME", str(tmp_path))
    monkeypatch.setenv("LAKEHOUSE_CONNECT_BIND_HOST", "0.0.0.0")
    with pytest.raises(ProcessError, match="LAKEHOUSE_CONNECT_BIND_HOST=0.0.0.0 .*THRIFT_AUTH"):
        endpoint.check_exposure(endpoint.EndpointSettings.from_env())


def test_waiting_for_the_endpoint_is_one_line_and_keeps_the_real_error(
    settings, capfd, monkeypatch
):
    """Nothing listens on the Thrift port: each refused attempt stays quiet (Thrift logged
    `Could not connect to any of ...` at ERROR for every one), one line says what start waits
    for, and the last error is kept for the message if it never answers."""
    monkeypatch.setattr(endpoint.time, "sleep", lambda seconds: None)
    polls = iter([True] * 5 + [False])
    error = endpoint.wait_for_sessions(settings, timeout=300, running=lambda: next(polls))
    out, err = capfd.readouterr()
    assert "Could not connect" not in out + err
    assert err.splitlines() == [
        "waiting up to 300s for thrift://localhost:10123 to accept a session ..."
    ]
    assert "Could not connect to any of" in error and "10123" in error
