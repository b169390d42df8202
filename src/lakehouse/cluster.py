"""A Spark standalone cluster: one master and N worker JVMs, by default all on this host's loopback.

`lakehouse cluster start|stop|status`. The master and workers are pyspark's own Spark
(`spark-class`), so nothing else needs installing. Point the project at it with
LAKEHOUSE_SPARK_MASTER=spark://127.0.0.1:7077: the embedded target and the endpoint then run
their tasks on the workers' executors, which receive the Delta jars from the driver (resolved by
their Maven coordinates, as in local mode). Pids, logs and the workers' directories (one per
executor, with its log) live in `$LAKEHOUSE_HOME/cluster/`.

Across hosts (docs/deployment.md): the master's host runs `lakehouse cluster start` with
LAKEHOUSE_CLUSTER_HOST set to its address (and LAKEHOUSE_CLUSTER_WORKERS=0 when it runs no
worker); every worker host runs it with its own address and LAKEHOUSE_CLUSTER_MASTER set to the
master's URL, which starts only that host's workers and waits until the master lists them.

Each application gets LAKEHOUSE_CLUSTER_APP_CORES cores unless it asks for its own
(`spark.cores.max`, LAKEHOUSE_SPARK_CORES_MAX): by default half of the cluster, so the endpoint
and one embedded dbt run can run at once instead of the second waiting for cores.
"""

from __future__ import annotations

import json
import os
import time
import urllib.parse
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lakehouse import processes
from lakehouse.settings import home

MASTER_CLASS = "org.apache.spark.deploy.master.Master"
WORKER_CLASS = "org.apache.spark.deploy.worker.Worker"


class ClusterError(processes.ProcessError):
    """The cluster could not be started, reached or stopped (one actionable message)."""


def _env_int(name: str, default: int) -> int:
    value = os.environ.get(name) or str(default)
    try:
        return int(value)
    except ValueError:
        raise ClusterError(f"{name}={value!r}: expected a whole number.") from None


@dataclass(frozen=True)
class ClusterSettings:
    home: Path
    host: str = "127.0.0.1"
    port: int = 7077
    ui_port: int = 8080
    workers: int = 2
    worker_cores: int = 1
    worker_memory: str = "2g"
    app_cores: int | None = None  # default: half of the cluster's cores
    # The master this host's workers join (spark://host:port); None: this host runs the master.
    join: str | None = None

    @classmethod
    def from_env(cls, project_dir: str | os.PathLike | None = None) -> ClusterSettings:
        app_cores = os.environ.get("LAKEHOUSE_CLUSTER_APP_CORES")
        return cls(
            home=home(Path(project_dir)) if project_dir else home(),
            host=os.environ.get("LAKEHOUSE_CLUSTER_HOST") or cls.host,
            port=_env_int("LAKEHOUSE_CLUSTER_PORT", cls.port),
            ui_port=_env_int("LAKEHOUSE_CLUSTER_UI_PORT", cls.ui_port),
            workers=_env_int("LAKEHOUSE_CLUSTER_WORKERS", cls.workers),
            worker_cores=_env_int("LAKEHOUSE_WORKER_CORES", cls.worker_cores),
            worker_memory=os.environ.get("LAKEHOUSE_WORKER_MEMORY") or cls.worker_memory,
            app_cores=_env_int("LAKEHOUSE_CLUSTER_APP_CORES", 0) if app_cores else None,
            join=_master_to_join(os.environ.get("LAKEHOUSE_CLUSTER_MASTER")),
        )

    @property
    def master_url(self) -> str:
        return self.join or f"spark://{self.host}:{self.port}"

    @property
    def status_url(self) -> str:
        """The master's JSON status (on the master's host, at LAKEHOUSE_CLUSTER_UI_PORT)."""
        master_host = urllib.parse.urlsplit(self.master_url).hostname
        return f"http://{master_host}:{self.ui_port}/json/"

    @property
    def directory(self) -> Path:
        return self.home / "cluster"

    @property
    def default_app_cores(self) -> int:
        return self.app_cores or max(1, self.workers * self.worker_cores // 2)

    def pid_file(self, process: str) -> Path:
        return self.directory / f"{process}.pid"

    def log_file(self, process: str) -> Path:
        return self.directory / f"{process}.log"

    def worker_names(self) -> list[str]:
        return [f"worker-{number}" for number in range(1, self.workers + 1)]


def _master_to_join(url: str | None) -> str | None:
    if not url:
        return None
    parts = urllib.parse.urlsplit(url)
    if parts.scheme != "spark" or not parts.hostname or not parts.port:
        raise ClusterError(
            f"LAKEHOUSE_CLUSTER_MASTER={url!r}: expected the master's URL, spark://<host>:<port>."
        )
    return url


def master_status(settings: ClusterSettings, timeout: float = 5.0) -> dict[str, Any] | None:
    """The master's own JSON status (workers, cores, applications); None when unreachable."""
    try:
        with urllib.request.urlopen(settings.status_url, timeout=timeout) as response:
            return json.load(response)
    except (OSError, ValueError):
        return None


def _spark_class(*arguments: str) -> list[str]:
    return [str(processes.spark_home() / "bin" / "spark-class"), *arguments]


def _cluster_env(settings: ClusterSettings, daemon_options: str = "") -> dict[str, str]:
    # SPARK_LOCAL_IP binds every port of the daemon (RPC and web UI) to the cluster's address;
    # without it the web UIs listen on all interfaces.
    return processes.spark_env(
        {"SPARK_LOCAL_IP": settings.host, "SPARK_DAEMON_JAVA_OPTS": daemon_options}
    )


def _wait_for(settings: ClusterSettings, ready, what: str, timeout: float) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for process in ["master", *settings.worker_names()]:
            pid_file = settings.pid_file(process)
            if pid_file.exists() and processes.read_pid(pid_file) is None:
                raise ClusterError(
                    f"The cluster's {process} exited while starting; log: "
                    f"{settings.log_file(process)}"
                )
        status = master_status(settings)
        if status is not None and ready(status):
            return status
        time.sleep(1)
    stop(settings)
    raise ClusterError(
        f"The cluster did not reach {what} within {timeout:.0f}s; it was stopped. "
        f"Logs: {settings.directory}"
    )


def start(settings: ClusterSettings, timeout: float = 120.0) -> str:
    """Start the master (unless this host joins one), then this host's workers, and wait until
    the master lists every one of them."""
    healthy, line = status(settings)
    if healthy:
        return f"already running: {line}"
    if _running_here(settings):
        raise ClusterError(
            f"A cluster process is running but the cluster is not healthy ({line}); run "
            "`lakehouse cluster stop` first."
        )
    processes.check_java()
    settings.directory.mkdir(parents=True, exist_ok=True)
    if not settings.join:
        _start_master(settings, timeout)
    elif master_status(settings) is None:
        raise ClusterError(
            f"The master to join (LAKEHOUSE_CLUSTER_MASTER={settings.join}) does not answer at "
            f"{settings.status_url}: start it first, and check that this host reaches its ports "
            "(LAKEHOUSE_CLUSTER_UI_PORT is the master's status port)."
        )
    for name in settings.worker_names():
        work_dir = settings.directory / name
        work_dir.mkdir(exist_ok=True)
        worker = _spark_class(
            WORKER_CLASS,
            *("--host", settings.host, "--webui-port", "0"),
            *("--cores", str(settings.worker_cores), "--memory", settings.worker_memory),
            *("--work-dir", str(work_dir)),
            settings.master_url,
        )
        processes.launch(
            worker, settings.pid_file(name), settings.log_file(name), _cluster_env(settings)
        )
    _wait_for(
        settings,
        lambda s: _workers_here(settings, s) >= settings.workers,
        f"{settings.workers} registered workers on {settings.host}",
        timeout,
    )
    return f"started: {status(settings)[1]}"


def _start_master(settings: ClusterSettings, timeout: float) -> None:
    processes.check_ports_free(
        {
            settings.port: "LAKEHOUSE_CLUSTER_PORT",
            settings.ui_port: "LAKEHOUSE_CLUSTER_UI_PORT",
        },
        settings.host,
    )
    master = _spark_class(
        MASTER_CLASS,
        *("--host", settings.host, "--port", str(settings.port)),
        *("--webui-port", str(settings.ui_port)),
    )
    default_cores = f"-Dspark.deploy.defaultCores={settings.default_app_cores}"
    processes.launch(
        master,
        settings.pid_file("master"),
        settings.log_file("master"),
        _cluster_env(settings, default_cores),
    )
    _wait_for(settings, lambda s: s.get("status") == "ALIVE", "a live master", timeout)


def _running_here(settings: ClusterSettings) -> list[str]:
    """The cluster processes of this host that are alive."""
    names = ["master", *settings.worker_names()]
    return [name for name in names if processes.read_pid(settings.pid_file(name)) is not None]


def _workers_here(settings: ClusterSettings, found: dict[str, Any]) -> int:
    """The live workers the master lists at this host's address (other hosts may add theirs)."""
    return sum(
        1
        for worker in found.get("workers", [])
        if worker.get("state") == "ALIVE" and worker.get("host") == settings.host
    )


def stop(settings: ClusterSettings) -> str:
    """Stop this host's workers, then its master (if it runs one)."""
    stopped = []
    for process in [*reversed(settings.worker_names()), "master"]:
        pid = processes.stop(settings.pid_file(process), timeout=30)
        if pid is not None:
            stopped.append(f"{process} (pid {pid})")
    return f"stopped {', '.join(stopped)}" if stopped else "not running"


def status(settings: ClusterSettings) -> tuple[bool, str]:
    """(healthy, one line): the master alive with every worker of this host registered, or why
    not."""
    found = master_status(settings)
    if found is None:
        return False, (
            f"{', '.join(_running_here(settings))} up but {settings.status_url} does not answer"
            if _running_here(settings)
            else "not running"
        )
    here = _workers_here(settings, found)
    line = (
        f"{settings.master_url}: {here} of {settings.workers} workers on {settings.host} "
        f"({found.get('aliveworkers', 0)} in all), {found.get('cores', 0)} cores "
        f"({found.get('coresused', 0)} used), {len(found.get('activeapps', []))} running "
        f"application(s); status {settings.status_url}, logs {settings.directory}"
    )
    return found.get("status") == "ALIVE" and here >= settings.workers, line
