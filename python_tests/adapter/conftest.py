"""dbt's standard adapter test suite (dbt-tests-adapter) on the `sparkdelta` adapter.

dbt-tests-adapter's fixtures (`project`, `unique_schema`, ...) are imported here rather than
through `pytest_plugins` (pytest accepts that only in the top-level conftest). Each test class
gets its own dbt project and schema (dbt-tests-adapter's `unique_schema`); dbt runs in this
process on the `session` method and reuses the pytest session's SparkSession (one JVM, with
Delta, started by python_tests/conftest.py from the project's `local` target), so the suite
runs against the adapter alone: the scratch projects have no macros of this project.

SPARKDELTA_TEST_TARGET picks the connection method the suite runs on: `session` (default),
`connect` (SQL and Python models through Spark Connect) or `thrift` (SQL through the Spark
Thrift server, Python models through Spark Connect). The remote two run against the project's
own endpoint (`lakehouse endpoint`), started once per pytest session with its own
LAKEHOUSE_HOME, free ports and a Spark Connect token: `make test-adapter-connect`,
`make test-adapter-thrift`.
"""

from __future__ import annotations

import os
import secrets

import pytest
import yaml
from dbt.tests.fixtures.project import *  # noqa: F403 (dbt-tests-adapter's fixtures)
from dbt.tests.util import write_file

from lakehouse.settings import session_settings
from python_tests.conftest import endpoint_env, running_test_endpoint

TARGETS = ("session", "connect", "thrift")
TARGET = os.environ.get("SPARKDELTA_TEST_TARGET") or "session"
if TARGET not in TARGETS:
    raise pytest.UsageError(f"SPARKDELTA_TEST_TARGET={TARGET}: use one of {', '.join(TARGETS)}.")


def pytest_report_header(config):
    return f"dbt adapter suite target: {TARGET} (SPARKDELTA_TEST_TARGET)"


def skip_on(*targets: str, reason: str):
    """Skip a class or test on the named targets, with the reason (never silently)."""
    return pytest.mark.skipif(TARGET in targets, reason=f"{TARGET} target: {reason}")


@pytest.fixture(scope="session")
def suite_endpoint(tmp_path_factory):
    """The project's Thrift + Spark Connect endpoint for the remote targets, with a Connect
    token (so every connection of the suite also proves the token path)."""
    token = secrets.token_urlsafe(24)
    with running_test_endpoint(endpoint_env(tmp_path_factory, connect_token=token)) as settings:
        yield settings, token


@pytest.fixture(scope="class")
def dbt_profile_target(request, lakehouse_home) -> dict:
    """The profile of SPARKDELTA_TEST_TARGET (see the module's docstring)."""
    if TARGET == "session":
        return _session_target(request.getfixturevalue("delta_spark"), lakehouse_home)
    settings, token = request.getfixturevalue("suite_endpoint")
    if TARGET == "connect":
        return {
            "type": "sparkdelta",
            "method": "connect",
            "spark_connect_url": settings.connect_url,
            "token": token,
            "threads": 1,
        }
    return {
        "type": "sparkdelta",
        "method": "thrift",
        "host": settings.client_host,
        "port": settings.thrift_port,
        "user": "dbt",
        "threads": 1,
        "socket_timeout": 600,
        "python_submission_method": "spark_connect",
        "spark_connect_url": settings.connect_url,
        "token": token,
    }


def _session_target(delta_spark, lakehouse_home) -> dict:
    """The `session` target with the Delta session settings of the project's `local` output.

    `delta_spark` starts (or skips without the Delta jars) the one SparkSession of the pytest
    session; the adapter's session method then finds it with getOrCreate().
    """
    settings = session_settings()
    return {
        "type": "sparkdelta",
        "method": "session",
        "host": "localhost",
        "threads": 1,
        "session_home": str(lakehouse_home),
        "spark_log_level": settings.log_level,
        "server_side_parameters": dict(settings.conf),
        "python_submission_method": "session",
    }


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
