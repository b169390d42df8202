"""For every test run from the repository's root (each `make` target): a test skipped at run
time (a missing program or package, a fixture that called `pytest.skip`) fails the run, named
at the end. Only a `skip` or `skipif` marker, chosen on purpose and visible in the code, skips:
a proof that did not run must never read as passed."""

from __future__ import annotations

import pytest

_unplanned: list[str] = []  # "<test>: <reason>", every pytest-xdist worker's included


def _planned(item) -> bool:
    return any(item.iter_markers("skip")) or any(item.iter_markers("skipif"))


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item, call):
    report = yield
    if report.skipped and not _planned(item):
        reason = report.longrepr[-1] if isinstance(report.longrepr, tuple) else report.longrepr
        report.user_properties = [*report.user_properties, ("unplanned_skip", str(reason))]
    return report


def pytest_runtest_logreport(report):
    _unplanned.extend(
        f"{report.nodeid}: {reason}"
        for name, reason in report.user_properties
        if name == "unplanned_skip"
    )


def pytest_terminal_summary(terminalreporter):
    if _unplanned:
        terminalreporter.write_line(
            f"!!! {len(_unplanned)} tests skipped at run time, not proven (the run fails):",
            red=True,
            bold=True,
        )
        for line in _unplanned:
            terminalreporter.write_line(f"    {line}", red=True)


def pytest_sessionfinish(session):
    if _unplanned and not hasattr(session.config, "workerinput"):
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
