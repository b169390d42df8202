"""The embedded Derby metastore admits one process: a session refused before its JVM starts
when another process has it booted (Derby's exclusive lock on dbex.lck), with one message."""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from dbt.adapters.sparkdelta.session import MetastoreInUse, check_embedded_metastore_free

HOLD_LOCK = """
import fcntl, sys, time
handle = open(sys.argv[1], "rb+")
fcntl.lockf(handle, fcntl.LOCK_EX)
print("locked", flush=True)
time.sleep(float(sys.argv[2]))
"""


@contextmanager
def lock_held(metastore_dir: Path, seconds: float) -> Iterator[None]:
    """Another process holds Derby's lock file for `seconds` (or until the block ends)."""
    (metastore_dir / "dbex.lck").write_bytes(b"")
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD_LOCK, str(metastore_dir / "dbex.lck"), str(seconds)],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout.readline().strip() == "locked"
        yield
    finally:
        holder.kill()
        holder.wait()


def test_a_metastore_booted_by_another_process_is_refused_with_what_to_do(tmp_path):
    with lock_held(tmp_path, 60):
        with pytest.raises(MetastoreInUse) as refused:
            check_embedded_metastore_free(tmp_path, grace_seconds=0.5)
        message = str(refused.value)
        assert str(tmp_path) in message and "another Spark process" in message
        assert "session_home" in message
    # the lock goes with the process that held it
    check_embedded_metastore_free(tmp_path)


def test_a_new_or_released_metastore_is_free(tmp_path):
    check_embedded_metastore_free(tmp_path)  # never booted: no lock file
    (tmp_path / "dbex.lck").write_bytes(b"")
    check_embedded_metastore_free(tmp_path)  # left by a process that ended


def test_a_process_that_is_ending_is_waited_for(tmp_path):
    """A command's JVM can still be shutting down when the next command starts."""
    with lock_held(tmp_path, 1):
        started = time.monotonic()
        check_embedded_metastore_free(tmp_path, grace_seconds=30)
        assert time.monotonic() - started >= 0.8  # it waited for the holder's second


def test_jvm_starts_take_turns_across_processes():
    """While one process starts its JVM (and resolves the Delta jars into the user's Ivy
    cache), another one's start waits: it cannot take the same lock until the first lets go."""
    from dbt.adapters.sparkdelta.session import one_resolution_at_a_time

    try_lock = (
        "import fcntl, sys\n"
        "handle = open(sys.argv[1], 'a')\n"
        "try:\n"
        "    fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)\n"
        "except BlockingIOError:\n"
        "    sys.exit(3)\n"
    )

    def other_process_can_start(lock_path: str) -> bool:
        done = subprocess.run([sys.executable, "-c", try_lock, lock_path], timeout=30)
        assert done.returncode in (0, 3), done
        return done.returncode == 0

    held = one_resolution_at_a_time()
    with held:
        assert not other_process_can_start(held.name)
    assert other_process_can_start(held.name)
