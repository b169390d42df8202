"""The embedded session's JVM is started with no Python code between fork and exec, so that a
process with live gRPC threads (a Spark Connect client) can still start it."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
from concurrent import futures

import grpc
import pytest
from pyspark import java_gateway
from pyspark.errors import PySparkRuntimeError

from dbt.adapters.sparkdelta.session import _fork_safe_jvm_start, _JvmProcess

# Stands in for Spark's bin/spark-submit: records its process group and ignored signals (a hex
# mask), then exits, so PySpark reports that the gateway never came up.
FAKE_SPARK_SUBMIT = """#!/bin/sh
echo "$(cut -d' ' -f5 /proc/$$/stat) $(awk '/^SigIgn/ {print $2}' /proc/$$/status)" \
    > "$(dirname "$0")/started"
exit 1
"""


def test_pyspark_starts_the_jvm_ignoring_sigint_in_dbts_process_group(tmp_path, monkeypatch):
    """Through PySpark's own launch code: Ctrl-C at the terminal stops dbt, not the JVM, as
    with PySpark's `preexec_fn`; and the JVM stays in dbt's process group (a kill of the group
    still reaches it)."""
    submit = tmp_path / "bin" / "spark-submit"
    submit.parent.mkdir()
    submit.write_text(FAKE_SPARK_SUBMIT)
    submit.chmod(0o755)
    monkeypatch.setenv("SPARK_HOME", str(tmp_path))
    monkeypatch.delenv("PYSPARK_GATEWAY_PORT", raising=False)

    with _fork_safe_jvm_start(), pytest.raises(PySparkRuntimeError, match="JAVA_GATEWAY_EXITED"):
        java_gateway.launch_gateway()

    group, ignored = (submit.parent / "started").read_text().split()
    assert int(group) == os.getpgrp()
    assert int(ignored, 16) & (1 << (signal.SIGINT - 1))
    assert not int(ignored, 16) & (1 << (signal.SIGTERM - 1))
    assert java_gateway.Popen is subprocess.Popen  # PySpark's module is left as it was


def test_preexec_fn_is_never_run():
    ran = []
    child = _JvmProcess([sys.executable, "-c", "pass"], preexec_fn=lambda: ran.append(1))
    assert child.wait(timeout=30) == 0
    assert ran == []


def test_starts_succeed_while_grpc_threads_are_busy():
    """While another thread makes gRPC calls, every start execs. With PySpark's `preexec_fn`,
    between 1 start in 1,000 and 1 in 50 aborted here (SIGABRT, gRPC's "epoll_wait error: Bad
    file descriptor" on its stderr), so this run would catch that only now and then: the two
    tests above are the exact guards."""
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=2))
    echo = grpc.unary_unary_rpc_method_handler(lambda request, context: request)
    server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler("t.E", {"E": echo}),))
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    channel = grpc.insecure_channel(f"127.0.0.1:{port}")
    call, stop, answers = channel.unary_unary("/t.E/E"), threading.Event(), []

    def keep_calling() -> None:
        while not stop.is_set():
            answers.append(call(b"x", timeout=10))

    caller = threading.Thread(target=keep_calling, daemon=True)
    caller.start()
    failed = []
    try:
        for _ in range(300):
            child = _JvmProcess(
                ["/bin/echo", "ok"],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN),  # PySpark's
            )
            out, err = child.communicate(timeout=30)
            if (child.returncode, out) != (0, b"ok\n"):
                failed.append((child.returncode, err.decode(errors="replace")[-200:]))
    finally:
        stop.set()
        caller.join(timeout=30)
        channel.close()
        server.stop(grace=None)
    assert not caller.is_alive()
    assert len(answers) > 300 and set(answers) == {b"x"}  # gRPC was busy throughout
    assert failed == []
