"""The adapter's Spark Connect sessions, without a server (no RPC is made)."""

from __future__ import annotations

from pyspark.sql.connect.client.core import SparkConnectClient
from pyspark.sql.connect.client.reattach import ExecutePlanResponseReattachableIterator

from dbt.adapters.sparkdelta.spark_connect import close_without_pool_shutdown


def test_closing_a_client_leaves_the_process_wide_release_pool_alone(monkeypatch):
    """PySpark's close shuts down the pool every session's results are released by (and a
    garbage-collected session calls it from any thread); the adapter's closes the channel only."""
    shutdowns: list[str] = []
    monkeypatch.setattr(
        ExecutePlanResponseReattachableIterator,
        "shutdown",
        classmethod(lambda cls: shutdowns.append("pool shut down")),
    )
    plain, guarded = SparkConnectClient("sc://localhost:1"), SparkConnectClient("sc://localhost:1")
    plain.close()
    close_without_pool_shutdown(guarded)
    guarded.close()
    assert plain.is_closed and guarded.is_closed
    assert shutdowns == ["pool shut down"]  # the plain client's only
