"""The local standalone cluster's settings and refusals, without starting Spark."""

from __future__ import annotations

import socket

import pytest

from lakehouse import cluster
from lakehouse.processes import ProcessError


@pytest.fixture
def settings(tmp_path, monkeypatch) -> cluster.ClusterSettings:
    monkeypatch.setenv("LAKEHOUSE_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("LAKEHOUSE_CLUSTER_PORT", "7123")
    monkeypatch.setenv("LAKEHOUSE_CLUSTER_UI_PORT", "8123")
    return cluster.ClusterSettings.from_env()


def test_defaults_two_one_core_workers_on_loopback(settings):
    assert settings.master_url == "spark://127.0.0.1:7123"
    assert settings.status_url == "http://127.0.0.1:8123/json/"
    assert settings.worker_names() == ["worker-1", "worker-2"]
    assert settings.directory == settings.home / "cluster"
    # half the cluster per application: the endpoint leaves room for an embedded run
    assert settings.default_app_cores == 1


def test_application_cores_can_be_set(monkeypatch, settings):
    monkeypatch.setenv("LAKEHOUSE_CLUSTER_WORKERS", "4")
    monkeypatch.setenv("LAKEHOUSE_WORKER_CORES", "2")
    assert cluster.ClusterSettings.from_env().default_app_cores == 4
    monkeypatch.setenv("LAKEHOUSE_CLUSTER_APP_CORES", "3")
    assert cluster.ClusterSettings.from_env().default_app_cores == 3


def test_a_bad_number_names_its_variable(monkeypatch):
    monkeypatch.setenv("LAKEHOUSE_CLUSTER_WORKERS", "two")
    with pytest.raises(cluster.ClusterError, match="LAKEHOUSE_CLUSTER_WORKERS='two'"):
        cluster.ClusterSettings.from_env()


def test_taken_port_is_refused_before_launch(settings):
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", settings.ui_port))
        busy.listen()
        with pytest.raises(ProcessError, match="8123 is already in use.*LAKEHOUSE_CLUSTER_UI_PORT"):
            cluster.start(settings, timeout=1)
    assert not settings.pid_file("master").exists()


def test_status_and_stop_when_not_running(settings):
    assert cluster.status(settings) == (False, "not running")
    assert cluster.stop(settings) == "not running"


def test_a_worker_host_joins_the_master_of_another(monkeypatch, settings):
    """A worker host: its workers bind to its own address and join the master's URL; the
    status page is the master's."""
    monkeypatch.setenv("LAKEHOUSE_CLUSTER_HOST", "10.0.0.3")
    monkeypatch.setenv("LAKEHOUSE_CLUSTER_MASTER", "spark://10.0.0.2:7077")
    joined = cluster.ClusterSettings.from_env()
    assert joined.master_url == "spark://10.0.0.2:7077"
    assert joined.status_url == "http://10.0.0.2:8123/json/"
    status = {"workers": [
        {"host": "10.0.0.3", "state": "ALIVE"},
        {"host": "10.0.0.4", "state": "ALIVE"},
        {"host": "10.0.0.3", "state": "DEAD"},
    ]}  # fmt: skip
    assert cluster._workers_here(joined, status) == 1


def test_a_bad_master_url_names_its_variable(monkeypatch):
    monkeypatch.setenv("LAKEHOUSE_CLUSTER_MASTER", "10.0.0.2:7077")
    with pytest.raises(cluster.ClusterError, match="LAKEHOUSE_CLUSTER_MASTER='10.0.0.2:7077'"):
        cluster.ClusterSettings.from_env()


def test_joining_a_master_that_does_not_answer_is_refused(monkeypatch, settings):
    monkeypatch.setenv("LAKEHOUSE_CLUSTER_MASTER", f"spark://127.0.0.1:{settings.port}")
    with pytest.raises(cluster.ClusterError, match="does not answer at http://127.0.0.1:8123"):
        cluster.start(cluster.ClusterSettings.from_env(), timeout=1)
    assert not settings.pid_file("worker-1").exists()
