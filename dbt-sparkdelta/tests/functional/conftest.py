"""dbt's standard adapter test suite (dbt-tests-adapter) on the `sparkdelta` adapter, from the
adapter's own folder: nothing of any project is imported, and the scratch projects have no
macros and no `file_format` of their own, so every Delta behaviour comes from the adapter.

Each test class gets its own dbt project and schema (dbt-tests-adapter's `project` and
`unique_schema`). SPARKDELTA_TEST_TARGET picks the connection method:

- `session` (default): the profile a stranger writes, `type: sparkdelta`, `method: session`,
  with only a session home of the test run's own. The first dbt invocation starts Spark with
  Delta in this process; every class after it reuses that one JVM.
- `thrift` (SQL through a Spark Thrift server, Python models through Spark Connect) and
  `connect` (SQL and Python models through Spark Connect): against a running endpoint named by
  SPARKDELTA_TEST_THRIFT_HOST, SPARKDELTA_TEST_THRIFT_PORT, SPARKDELTA_TEST_CONNECT_URL and
  SPARKDELTA_TEST_CONNECT_TOKEN (a Spark Thrift server and Spark Connect with Delta, over one
  metastore).
"""

from __future__ import annotations

import os
import time

import pytest
import yaml
from dbt.tests.fixtures.project import *  # noqa: F403 (dbt-tests-adapter's fixtures)
from dbt.tests.util import write_file

from dbt.adapters.sparkdelta.session import (
    SessionSettings,
    get_or_create_session,
)

TARGETS = ("session", "connect", "thrift")
TARGET = os.environ.get("SPARKDELTA_TEST_TARGET") or "session"
if TARGET not in TARGETS:
    raise pytest.UsageError(f"SPARKDELTA_TEST_TARGET={TARGET}: use one of {', '.join(TARGETS)}.")
ENDPOINT_VARIABLES = {
    "thrift": (
        "SPARKDELTA_TEST_THRIFT_HOST",
        "SPARKDELTA_TEST_THRIFT_PORT",
        "SPARKDELTA_TEST_CONNECT_URL",
        "SPARKDELTA_TEST_CONNECT_TOKEN",
    ),
    "connect": ("SPARKDELTA_TEST_CONNECT_URL", "SPARKDELTA_TEST_CONNECT_TOKEN"),
}


def pytest_configure(config):
    # dbt-tests-adapter writes its class-scoped fixtures as instance methods (pytest 9 warns).
    config.addinivalue_line(
        "filterwarnings", "ignore:Class-scoped fixtures defined as instance methods"
    )


def pytest_report_header(config):
    return f"dbt adapter suite target: {TARGET} (SPARKDELTA_TEST_TARGET)"


def _endpoint() -> dict[str, str]:
    """The endpoint the remote targets run against, from the environment."""
    names = ENDPOINT_VARIABLES[TARGET]
    missing = [name for name in names if not os.environ.get(name)]
    if missing:
        raise pytest.UsageError(
            f"SPARKDELTA_TEST_TARGET={TARGET} runs against a running endpoint: set "
            f"{', '.join(missing)} (a Spark Thrift server and Spark Connect with Delta)."
        )
    return {name: os.environ[name] for name in names}


@pytest.fixture(scope="session")
def session_home(tmp_path_factory) -> str:
    """The session target's home (metastore, warehouse, logs): the test run's own."""
    return str(tmp_path_factory.mktemp("sparkdelta_home"))


@pytest.fixture(scope="session")
def delta_session(session_home):
    """This process's Spark session with Delta, as the `session` method starts it from a
    profile with only `session_home` (an active session, e.g. a project's test session, is
    reused). A failure to start (Delta jars that do not resolve included) is an error of every
    test that needs it, never a skip."""
    return get_or_create_session(SessionSettings.from_profile({"session_home": session_home}))


@pytest.fixture(scope="class")
def dbt_profile_target(request) -> dict:
    """The profile of SPARKDELTA_TEST_TARGET (see the module's docstring)."""
    if TARGET == "session":
        request.getfixturevalue("delta_session")
        home = request.getfixturevalue("session_home")
        return {"type": "sparkdelta", "method": "session", "session_home": home}
    endpoint = _endpoint()
    connect = {
        "spark_connect_url": endpoint["SPARKDELTA_TEST_CONNECT_URL"],
        "token": endpoint["SPARKDELTA_TEST_CONNECT_TOKEN"],
        "threads": 1,
    }
    if TARGET == "connect":
        return {"type": "sparkdelta", "method": "connect", **connect}
    return {
        "type": "sparkdelta",
        "method": "thrift",
        "host": endpoint["SPARKDELTA_TEST_THRIFT_HOST"],
        "port": int(endpoint["SPARKDELTA_TEST_THRIFT_PORT"]),
        "user": "dbt",
        "socket_timeout": 600,
        "python_submission_method": "spark_connect",
        **connect,
    }


@pytest.fixture
def local_zone_not_the_sessions(monkeypatch) -> str:
    """This process's local time zone is America/Los_Angeles for the test (the session's is
    UTC): PySpark's collect() then gives TIMESTAMPs in a zone other than the session's."""
    monkeypatch.setenv("TZ", "America/Los_Angeles")
    time.tzset()
    yield "America/Los_Angeles"
    monkeypatch.undo()
    time.tzset()


def _merged(defaults: dict, updates: dict) -> dict:
    merged = dict(defaults)
    for key, value in updates.items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = _merged(merged[key], value)
        else:
            merged[key] = value
    return merged


@pytest.fixture(scope="class")
def dbt_project_yml(project_root, project_config_update):
    """dbt-tests-adapter's dbt_project.yml. No `file_format` anywhere: the suite runs on the
    adapter's defaults (Delta), as a stranger's project does."""
    updates = project_config_update or {}
    if isinstance(updates, str):
        updates = yaml.safe_load(updates)
    project_config = _merged(
        {
            "name": "test",
            "profile": "test",
            "flags": {"send_anonymous_usage_stats": False},
        },
        updates,
    )
    write_file(yaml.safe_dump(project_config), project_root, "dbt_project.yml")
    return project_config
