"""Which Spark a `lakehouse` command runs on (`lakehouse.engine.choose_target`; no Spark)."""

from __future__ import annotations

import pytest

from lakehouse.engine import choose_target


@pytest.mark.parametrize(
    ("configured", "in_process", "running", "start", "expected"),
    [
        # a target the user names is used as named, whatever runs
        ("local", False, True, True, ("local", False)),
        ("thrift", True, False, True, ("thrift", False)),
        # a Spark session already in this process (the tests, a notebook) is the warm engine
        (None, True, True, True, ("local", False)),
        # this home's endpoint, when it runs, is used by every command
        (None, False, True, False, ("thrift", False)),
        (None, False, True, True, ("thrift", False)),
        # the loop's steps start it on first use; the other commands run embedded
        (None, False, False, True, ("thrift", True)),
        (None, False, False, False, ("local", False)),
    ],
)
def test_the_target_of_a_command(configured, in_process, running, start, expected):
    assert choose_target(configured, in_process, running, start) == expected
