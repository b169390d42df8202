"""The profile's credentials, without dbt's runtime or a JVM."""

from __future__ import annotations

import pytest

from dbt.adapters.sparkdelta.credentials import SparkDeltaCredentials


def credentials(**fields) -> SparkDeltaCredentials:
    data = {"schema": "analytics", **fields}
    SparkDeltaCredentials.validate(data)
    return SparkDeltaCredentials.from_dict(data)


@pytest.mark.parametrize(
    ("fields", "shown", "hidden"),
    [
        (
            {"method": "session", "session_home": ".spark"},
            {"method": "session", "schema": "analytics", "session_home": ".spark"},
            {"host", "port", "cluster", "endpoint", "organization"},
        ),
        (
            {"method": "thrift", "host": "spark.internal", "port": 10000, "user": "dbt"},
            {"method": "thrift", "host": "spark.internal", "port": 10000, "user": "dbt"},
            {"cluster", "endpoint", "organization", "session_home"},
        ),
        (
            {"method": "connect", "spark_connect_url": "sc://spark.internal:15002"},
            {"method": "connect", "spark_connect_url": "sc://spark.internal:15002"},
            {"host", "port", "cluster", "endpoint", "organization"},
        ),
    ],
)
def test_dbt_debug_shows_the_fields_of_the_chosen_method(fields, shown, hidden):
    info = dict(credentials(**fields).connection_info())
    assert shown.items() <= info.items()
    assert not hidden & set(info), info


def test_thrift_polls_every_second_unless_told():
    # Spark's Thrift server holds a poll up to 5 s; dbt-spark's 5 s sleep on top only adds latency.
    assert credentials(method="thrift", host="h").poll_interval == 1
    assert credentials(method="thrift", host="h", poll_interval=5).poll_interval == 5


def test_dbt_debug_never_shows_the_token():
    info = dict(credentials(method="connect", spark_connect_url="sc://h:1", token="s3cret")
                .connection_info())  # fmt: skip
    assert "s3cret" not in repr(info)
