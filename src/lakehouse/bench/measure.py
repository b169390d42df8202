"""What the benchmark measures besides wall time: the resident memory of this process and the
JVM, Delta's metrics of the last commit, the files a query's scans read, the machine."""

from __future__ import annotations

import os
import platform
import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path

from lakehouse.bench import report

MEMORY_SAMPLE_S = 0.5


def log(message: str) -> None:
    print(f"[bench {datetime.now(UTC):%H:%M:%S}] {message}", flush=True)


def seconds_of(action: Callable[[], object]) -> float:
    start = time.perf_counter()
    action()
    return time.perf_counter() - start


def rss_bytes(pid: int, field: str = "VmRSS") -> int:
    try:
        with open(f"/proc/{pid}/status") as status:
            for line in status:
                if line.startswith(field + ":"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


class MemorySampler:
    """Samples the resident set of this Python process plus the JVM's in a thread; `peak` is
    the largest sum seen since the last `reset`."""

    def __init__(self, pids: list[int], interval: float = MEMORY_SAMPLE_S):
        self.pids, self.interval = pids, interval
        self.peak = self.overall_peak = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.is_set():
            total = sum(rss_bytes(pid) for pid in self.pids)
            self.peak = max(self.peak, total)
            self.overall_peak = max(self.overall_peak, total)
            self._stop.wait(self.interval)

    def start(self) -> MemorySampler:
        self._thread.start()
        return self

    def reset(self) -> None:
        self.peak = 0

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()


def last_metrics(spark, table: str) -> dict:
    row = spark.sql(f"describe history {table} limit 1").collect()[0]
    return dict(row.operationMetrics or {})


def files_read(spark, sql: str) -> int:
    """Files the scans of a query read, from the executed plan's scan metrics (`numFiles`,
    "number of files read"), after running it. Adaptive execution is off for the query, so
    the executed plan is the one that ran."""
    previous = spark.conf.get("spark.sql.adaptive.enabled")
    spark.conf.set("spark.sql.adaptive.enabled", "false")
    try:
        frame = spark.sql(sql)
        frame.collect()
        plan = frame._jdf.queryExecution().executedPlan()
    finally:
        spark.conf.set("spark.sql.adaptive.enabled", previous)
    leaves = plan.collectLeaves()
    total, scans = 0, 0
    for index in range(leaves.size()):
        metric = leaves.apply(index).metrics().get("numFiles")
        if metric.isDefined():
            total += int(metric.get().value())
            scans += 1
    if not scans:
        raise RuntimeError(f"no file scan with a numFiles metric in the plan of: {sql}")
    return total


def machine_info(spark) -> dict:
    cpu_model = platform.processor() or "unknown CPU"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu_model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    memory = 0
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                memory = int(line.split()[1]) * 1024
    except OSError:
        pass
    versions = {"Python": platform.python_version()}
    for package in ("pyspark", "delta-spark", "dbt-core", "dbt-spark"):
        versions[package] = metadata.version(package)
    # SQL, not the JVM gateway: the same on a Spark Connect session
    java = "select java_method('java.lang.System', 'getProperty', 'java.version') as v"
    versions["Java"] = spark.sql(java).collect()[0].v
    return {
        "cpu_model": cpu_model,
        "cores": os.cpu_count(),
        "memory_gib": memory / report.GIB,
        "os": f"{platform.system()} {platform.release()}",
        "load_average": " ".join(f"{x:.2f}" for x in os.getloadavg()),
        "versions": versions,
    }
