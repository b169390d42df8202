"""Background JVM processes of the local deployment (the endpoint, the cluster's master and
workers): launched from pyspark's own Spark distribution, tracked by pid files, stopped by
process group."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import time
from pathlib import Path


class ProcessError(RuntimeError):
    """A background process could not be started, reached or stopped (one actionable message)."""


def spark_home() -> Path:
    import pyspark

    return Path(pyspark.__file__).parent


def spark_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    return {**os.environ, "SPARK_HOME": str(spark_home()), **(extra or {})}


def check_java() -> None:
    java_home = os.environ.get("JAVA_HOME")
    if java_home and (Path(java_home) / "bin" / "java").exists():
        return
    if shutil.which("java"):
        return
    raise ProcessError("Java not found: install a JDK 17 or set JAVA_HOME.")


def free_port() -> int:
    """A port of this host no one listens on now (the system's choice), for a test or a
    benchmark's own endpoint."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def port_taken(port: int, host: str = "127.0.0.1") -> bool:
    with socket.socket() as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((host, port))
        except OSError:
            return True
    return False


def check_ports_free(ports: dict[int, str], host: str = "127.0.0.1") -> None:
    """Fail before launching when a port is taken, naming the variable that moves it."""
    for port, variable in ports.items():
        if port_taken(port, host):
            raise ProcessError(
                f"Port {port} is already in use: stop what listens there or choose another "
                f"port with {variable}=<port>."
            )


def launch(command: list[str], pid_file: Path, log_file: Path, env: dict[str, str]) -> int:
    """Start `command` in its own process group (so `stop` ends it and its children), output
    appended to `log_file`; returns the log offset where this launch's output begins."""
    log_file.parent.mkdir(parents=True, exist_ok=True)
    offset = log_file.stat().st_size if log_file.exists() else 0
    with open(log_file, "ab") as log:
        process = subprocess.Popen(
            command,
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            env=env,
            start_new_session=True,
        )
    pid_file.write_text(str(process.pid))
    return offset


def output_since(log_file: Path, offset: int) -> str:
    with open(log_file, "rb") as log:
        log.seek(offset)
        return log.read().decode("utf-8", "replace")


def read_pid(pid_file: Path) -> int | None:
    """The pid in `pid_file` when that process is alive; None otherwise."""
    try:
        pid = int(pid_file.read_text().strip())
    except (FileNotFoundError, ValueError):
        return None
    _reap(pid)
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return None
    except PermissionError:
        pass  # alive, owned by another user
    return pid


def stop(pid_file: Path, timeout: float = 60.0) -> int | None:
    """SIGTERM the process group of the pid in `pid_file`, SIGKILL after `timeout`; the pid
    stopped, or None when nothing was running."""
    pid = read_pid(pid_file)
    if pid is None:
        pid_file.unlink(missing_ok=True)
        return None
    os.killpg(pid, signal.SIGTERM)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and read_pid(pid_file) is not None:
        time.sleep(0.5)
    if read_pid(pid_file) is not None:
        os.killpg(pid, signal.SIGKILL)
        time.sleep(0.5)
        _reap(pid)
    pid_file.unlink(missing_ok=True)
    return pid


def _reap(pid: int) -> None:
    """Collect the exit status when this process started `pid` (no zombie left behind)."""
    try:
        os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        pass
