"""Test hosts on this machine: Linux network namespaces, each with its own address on one bridge.

A namespace has its own interfaces, addresses, ports and loopback, so two processes in two of
them reach each other only through the addresses given here, as two hosts would; they still
share the file system (as hosts share a warehouse on HDFS or an object store). Needs root and
iproute2. `Hosts.remove` deletes every namespace and link of the prefix, so a run killed before
its cleanup is cleaned up by the next one.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import time
from dataclasses import dataclass

IP = shutil.which("ip") or "/usr/sbin/ip"


def _ip(*arguments: str, check: bool = True) -> subprocess.CompletedProcess:
    result = subprocess.run([IP, *arguments], capture_output=True, text=True)
    if check and result.returncode != 0:
        raise RuntimeError(f"ip {' '.join(arguments)} failed: {result.stderr.strip()}")
    return result


def _alive(pid: int) -> bool:
    with contextlib.suppress(ChildProcessError):
        os.waitpid(pid, os.WNOHANG)  # a child of this process: collect it
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def available() -> str | None:
    """Why the test hosts cannot be made here, or None when they can."""
    if os.geteuid() != 0:
        return "network namespaces need root"
    if not os.path.exists(IP):
        return "needs iproute2 (apt-get install iproute2)"
    return None


@dataclass(frozen=True)
class Hosts:
    """Namespaces `<prefix>-<name>`, addresses `<subnet>.<2, 3, ...>/24` in the order of
    `names`, on the bridge `<prefix>-br` (which has `<subnet>.1`: the machine itself, from
    where the test reads the cluster's status page)."""

    prefix: str
    subnet: str  # the first three octets, e.g. "10.228.28"
    names: tuple[str, ...]

    def namespace(self, name: str) -> str:
        return f"{self.prefix}-{name}"

    def address(self, name: str) -> str:
        return f"{self.subnet}.{self.names.index(name) + 2}"

    @property
    def bridge(self) -> str:
        return f"{self.prefix}-br"

    @property
    def gateway(self) -> str:
        return f"{self.subnet}.1"

    def exec(self, name: str, command: list[str]) -> list[str]:
        """`command` run on host `name`."""
        return [IP, "netns", "exec", self.namespace(name), *command]

    def create(self) -> None:
        self.remove()
        _ip("link", "add", self.bridge, "type", "bridge")
        _ip("addr", "add", f"{self.gateway}/24", "dev", self.bridge)
        _ip("link", "set", self.bridge, "up")
        for index, name in enumerate(self.names):
            namespace, outside = self.namespace(name), f"{self.prefix}-v{index}"
            _ip("netns", "add", namespace)
            _ip("link", "add", outside, "type", "veth", "peer", "name", "eth0", "netns", namespace)
            _ip("link", "set", outside, "master", self.bridge, "up")
            inside = ["netns", "exec", namespace, IP]
            _ip(*inside, "addr", "add", f"{self.address(name)}/24", "dev", "eth0")
            _ip(*inside, "link", "set", "eth0", "up")
            _ip(*inside, "link", "set", "lo", "up")

    def remove(self) -> None:
        """End every process left in a namespace of this prefix (a namespace lives on while a
        process runs in it), then delete the namespaces and links (veths go with them)."""
        namespaces = [
            line.split()[0]
            for line in _ip("netns", "list").stdout.splitlines()
            if line.startswith(f"{self.prefix}-")
        ]
        for stop in (signal.SIGTERM, signal.SIGKILL):
            pids = [
                int(pid)
                for namespace in namespaces
                for pid in _ip("netns", "pids", namespace, check=False).stdout.split()
            ]
            for pid in pids:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, stop)
            deadline = time.monotonic() + 15
            while pids and time.monotonic() < deadline:
                pids = [pid for pid in pids if _alive(pid)]
                time.sleep(0.2)
        for namespace in namespaces:
            _ip("netns", "delete", namespace, check=False)
        for line in _ip("-o", "link", "show").stdout.splitlines():
            link = line.split(":")[1].strip().split("@")[0]
            if link.startswith(f"{self.prefix}-"):
                _ip("link", "delete", link, check=False)
