"""One SparkSession (one JVM) for the whole pytest session, shared by dbt invoked in-process.

A Spark session that cannot start (Delta jars that do not resolve included) is an error of
every test that needs it, never a skip: a proof that did not run must not read as passed.
Likewise a test skipped at run time (a missing program, a missing package) fails the run; only
a `skip`/`skipif` marker, chosen on purpose, skips.
"""

from __future__ import annotations

import csv
import json
import os
import tempfile
import time
import uuid
from collections import Counter
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

import pytest

from dbt.adapters.sparkdelta.session import get_or_create_session
from lakehouse.processes import free_port
from lakehouse.settings import PROJECT_DIR, session_settings
from python_tests import fault_injection

# What the reliability tests exercised (writers, kill points, bad inputs, injection attempts,
# rows checked), reported at the end of the run and in target/reliability.json.
RELIABILITY: Counter = Counter()


# The session's shared builds: a worker that needs one builds it, so all their tests go to one
# worker, and they go first: the longest.
SHARED_BUILDS = ("shop", "endpoint_shop")
# Then the longest module of `make test-sequences` (about 580 s, against 480 s and 360 s for the
# two others): started first, it runs beside the two others one after the other.
LONGEST_GROUPS = ("python_tests/integration/test_late_changes.py",)
FIRST_GROUPS = SHARED_BUILDS + LONGEST_GROUPS
PROJECT_TESTS = Path(__file__).parent


def worker_group(item) -> str:
    """The tests that run in one worker (one pytest process, its own Spark session): those
    sharing one of SHARED_BUILDS; else those of one package with a package-scoped fixture, or
    of one module (its module- and class-scoped projects, its tests' order)."""
    used = set(getattr(item, "fixturenames", ()))
    callspec = getattr(item, "callspec", None)  # a build named by an indirect parameter
    used.update(v for v in (callspec.params.values() if callspec else ()) if isinstance(v, str))
    for build in SHARED_BUILDS:
        if build in used:
            return build
    path = item.nodeid.split("::")[0]
    scopes = {d[-1].scope for d in item._fixtureinfo.name2fixturedefs.values() if d}
    return path.rpartition("/")[0] if "package" in scopes else path


def run_order(item, group: str) -> int:
    """The shared builds and the longest groups first; the adapter's own tests
    (dbt-sparkdelta/tests, when run beside these) last, so that in each process they reuse the
    Spark session of these tests (with its Spark Connect server) rather than start one of their
    own before it."""
    if PROJECT_TESTS not in item.path.parents:
        return len(FIRST_GROUPS) + 1
    return FIRST_GROUPS.index(group) if group in FIRST_GROUPS else len(FIRST_GROUPS)


def pytest_collection_modifyitems(config, items):
    for item in items:
        if "delta_spark" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.delta)
    groups = {item.nodeid: worker_group(item) for item in items}
    items.sort(key=lambda item: run_order(item, groups[item.nodeid]))
    groups_file = getattr(config, "workerinput", {}).get("worker_groups")
    if groups_file:  # a pytest-xdist worker: its groups, for the controller's scheduler
        written = Path(f"{groups_file}.{config.workerinput['workerid']}")
        written.write_text(json.dumps(groups))
        written.rename(written.with_name(f"{written.name}.json"))  # whole, or not there


# `make test` runs two pytest processes (pytest-xdist, `--dist loadscope`): each gets whole
# groups (worker_group), which the workers work out at collection and leave in a file, since
# only they see the tests' fixtures. (xdist's own loadgroup renames the tests' node ids, which
# pytest 9 no longer allows.)
def _groups_file() -> Path:
    """Where the workers leave their groups: named by the controller's process."""
    return Path(tempfile.gettempdir()) / f"lakehouse-worker-groups-{os.getpid()}"


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node):
    node.workerinput["worker_groups"] = str(_groups_file())


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config, log):
    if config.getvalue("dist") != "loadscope":
        return None
    from xdist.scheduler import LoadScopeScheduling

    class GroupScheduling(LoadScopeScheduling):
        groups: dict[str, str] = {}

        def _split_scope(self, nodeid: str) -> str:
            if not self.groups:  # every worker collected the same tests: one file will do
                base = _groups_file()
                [written, *_] = base.parent.glob(f"{base.name}.gw*.json")
                self.groups = json.loads(written.read_text())
            return self.groups[nodeid]

    return GroupScheduling(config, log)


def pytest_unconfigure(config):
    if not hasattr(config, "workerinput"):
        base = _groups_file()
        for written in base.parent.glob(f"{base.name}.*"):
            written.unlink()


@pytest.fixture
def local_zone_not_the_sessions(monkeypatch) -> str:
    """This process's local time zone is America/Los_Angeles for the test (the sessions' is
    UTC): PySpark's collect() then gives TIMESTAMPs in a zone other than the session's."""
    monkeypatch.setenv("TZ", "America/Los_Angeles")
    time.tzset()
    yield "America/Los_Angeles"
    monkeypatch.undo()
    time.tzset()


@pytest.fixture(scope="session")
def lakehouse_home(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("lakehouse_home")


def endpoint_env(
    tmp_path_factory,
    connect_token: str | None = None,
    memory: str = "2g",
    home: Path | None = None,
    **extra: str,
) -> dict[str, str]:
    """The environment of a test endpoint: its own LAKEHOUSE_HOME and free ports, so it never
    meets the pytest session's embedded Spark or another endpoint; `extra` variables (LDAP, a
    metastore, a cluster master) come last and win."""
    return {
        "LAKEHOUSE_HOME": str(home or tmp_path_factory.mktemp("endpoint_home")),
        "LAKEHOUSE_THRIFT_PORT": str(free_port()),
        "LAKEHOUSE_SPARK_CONNECT_PORT": str(free_port()),
        "LAKEHOUSE_DRIVER_MEMORY": memory,
        # Set even when empty: a token exported in the shell must not reach the endpoint.
        "LAKEHOUSE_CONNECT_TOKEN": connect_token or "",
        **extra,
    }


@contextmanager
def running_test_endpoint(env: Mapping[str, str], timeout: int = 400) -> Iterator:
    """The project's endpoint (`lakehouse endpoint start`) on `env` (see `endpoint_env`),
    stopped when the block ends, however it ends. Yields its `EndpointSettings`."""
    from lakehouse import endpoint
    from lakehouse.dbt_runner import environment

    with environment(env):
        settings = endpoint.EndpointSettings.from_env()
    print(f"\nendpoint {endpoint.start(settings, timeout=timeout)}")
    try:
        yield settings
    finally:
        print(f"endpoint {endpoint.stop(settings)}")


@pytest.fixture(scope="session")
def spark_connect_port() -> int:
    return free_port()


@pytest.fixture(scope="session")
def spark(lakehouse_home, spark_connect_port):
    """The session's SparkSession with Delta.

    It also serves Spark Connect on a free port, so Python models can be submitted through
    `spark_connect` against the same metastore.
    """
    os.environ["LAKEHOUSE_HOME"] = str(lakehouse_home)
    connect = {
        "spark.plugins": "org.apache.spark.sql.connect.SparkConnectPlugin",
        "spark.connect.grpc.binding.port": str(spark_connect_port),
    }
    session = get_or_create_session(session_settings().with_conf(connect))
    yield session
    session.stop()


@pytest.fixture(scope="session")
def delta_spark(spark):
    """The SparkSession with Delta (the name says what a test needs of it)."""
    return spark


def pytest_configure(config):
    """The reliability tests' crash points, in this process too (inactive unless
    SPARKDELTA_KILL_AT or SPARKDELTA_FAIL_AT is set)."""
    fault_injection.install()


_counted: Counter = Counter()  # what this process's reports already carry
_reported: Counter = Counter()  # what the reports said: every worker's, under pytest-xdist


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item, call):
    """Each report carries what its phase added to RELIABILITY, so the process that prints
    the summary (pytest-xdist's controller) can add up its workers' counts."""
    report = yield
    exercised = RELIABILITY - _counted
    if exercised:
        report.user_properties = [*report.user_properties, ("reliability", dict(exercised))]
        _counted.update(exercised)
    return report


def pytest_runtest_logreport(report):
    for name, counts in report.user_properties:
        if name == "reliability":
            _reported.update(counts)


def seed_row_count(name: str) -> int:
    """The rows of the project's seed `name` (its CSV less the header)."""
    with open(PROJECT_DIR / "seeds" / f"{name}.csv", newline="") as file:
        return len(list(csv.reader(file))) - 1


def unique_schema(prefix: str) -> str:
    return f"{prefix}_{uuid.uuid4().hex[:8]}"


def pytest_terminal_summary(terminalreporter):
    if hasattr(terminalreporter.config, "workerinput"):
        return  # a pytest-xdist worker: its controller reports
    if _reported:
        counts = dict(sorted(_reported.items()))
        terminalreporter.write_line(
            "reliability exercised: " + ", ".join(f"{k}={v}" for k, v in counts.items()),
            bold=True,
        )
        report = PROJECT_DIR / "target" / "reliability.json"
        report.parent.mkdir(exist_ok=True)
        report.write_text(json.dumps(counts, indent=2) + "\n")
