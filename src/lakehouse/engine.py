"""Which Spark a `lakehouse` command runs on: the warm engine of the analyst's loop.

A command that starts its own embedded Spark pays a JVM start and a cold engine every time
(tens of seconds before the first query). So, unless LAKEHOUSE_TARGET names a target:
- a Spark session already running in this process is used as it is (`local`);
- else this home's endpoint (`lakehouse endpoint`), when it runs, is used through `thrift`
  (it also holds the home's Derby metastore, which admits one process);
- else `lakehouse dev` starts that endpoint on first use and leaves it running for the next
  step (`lakehouse endpoint stop` stops it); the other commands run embedded.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from lakehouse import processes

LOCAL, THRIFT = "local", "thrift"


def choose_target(
    configured: str | None, session_in_process: bool, endpoint_running: bool, start: bool
) -> tuple[str, bool]:
    """(target, whether to start the endpoint first) for a command; see the module's doc."""
    if configured:
        return configured, False
    if session_in_process:
        return LOCAL, False
    if endpoint_running:
        return THRIFT, False
    return (THRIFT, True) if start else (LOCAL, False)


def engine_env(project_dir: Path, start: bool) -> dict[str, str]:
    """The environment that points this process's dbt and Spark at the chosen target
    (LAKEHOUSE_TARGET, and the endpoint's ports when it is this home's endpoint); starts the
    endpoint first when that is the choice."""
    from dbt.adapters.sparkdelta.session import active_session
    from lakehouse import endpoint

    configured = os.environ.get("LAKEHOUSE_TARGET")
    settings = endpoint.EndpointSettings.from_env(project_dir)
    target, starting = choose_target(
        configured,
        active_session() is not None,
        processes.read_pid(settings.pid_file) is not None,
        start,
    )
    if configured or target == LOCAL:
        return {"LAKEHOUSE_TARGET": target}
    if starting:
        print(
            "starting the warm engine for this and your next steps (`lakehouse endpoint stop` "
            "stops it) ...",
            file=sys.stderr,
        )
        print(f"endpoint {endpoint.start(settings)}", file=sys.stderr)
    return {
        "LAKEHOUSE_TARGET": THRIFT,
        "LAKEHOUSE_THRIFT_HOST": settings.client_host,
        "LAKEHOUSE_THRIFT_PORT": str(settings.thrift_port),
        "LAKEHOUSE_SPARK_CONNECT_URL": settings.connect_url,
    }
