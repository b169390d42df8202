"""The retry policy for Delta conflicts: classification, backoff and messages, without Spark.

The error texts are what Delta 4.0.1 raised in the reliability tests (py4j form)."""

from __future__ import annotations

import pytest

from dbt.adapters.sparkdelta.retry import (
    CONFLICTS,
    RETRYABLE,
    DeltaConflictError,
    RetryPolicy,
    classify,
    conflict_message,
    describe_statement,
    retried_on,
    run_statement,
    run_with_retry,
)

APPEND_CONFLICT = (
    "An error occurred while calling o62.sql.\n: io.delta.exceptions.ConcurrentAppendException: "
    "[DELTA_CONCURRENT_APPEND] ConcurrentAppendException: Files were added to the root of the "
    "table by a concurrent update. Please try the operation again.\nConflicting commit: "
    '{"timestamp":1795341206389,"operation":"OPTIMIZE","operationParameters":{"predicate":[]},'
    '"readVersion":5,"isolationLevel":"SnapshotIsolation","isBlindAppend":false}\n'
    "\tat io.delta.exceptions.ConcurrentAppendException(X.scala:1)"
)
METADATA_CONFLICT = (
    "[DELTA_METADATA_CHANGED] MetadataChangedException: The metadata of the Delta table has "
    "been changed by a concurrent update. Please try the operation again.\nConflicting commit: "
    '{"timestamp":1795341246638,"operation":"ADD COLUMNS","operationParameters":{}}'
)


def test_classify_by_class_name_or_error_class():
    conflict = classify(APPEND_CONFLICT)
    assert (conflict.exception, conflict.retryable, conflict.operation) == (
        "ConcurrentAppendException", True, "OPTIMIZE",
    )  # fmt: skip
    assert classify("[DELTA_CONCURRENT_DELETE_READ] gone").exception == (
        "ConcurrentDeleteReadException"
    )
    assert classify(METADATA_CONFLICT).retryable is False
    assert classify("[DELTA_PROTOCOL_CHANGED] x").exception == "ProtocolChangedException"
    assert classify("[TABLE_OR_VIEW_NOT_FOUND] nope") is None


def test_backoff_grows_exponentially_is_capped_and_jittered():
    policy = RetryPolicy(attempts=6, base_delay=0.5, max_delay=3.0, jitter=0.5)
    assert [policy.delay(n, lambda: 0.0) for n in range(1, 6)] == [0.5, 1.0, 2.0, 3.0, 3.0]
    assert policy.delay(2, lambda: 1.0) == 0.5  # the jitter takes up to half of it
    assert all(0.25 <= policy.delay(1) <= 0.5 for _ in range(50))


def test_retryable_conflicts_are_retried_until_success():
    calls, retries, waits = [], [], []

    def action():
        calls.append(1)
        if len(calls) < 3:
            raise RuntimeError(APPEND_CONFLICT)
        return "ok"

    result = run_with_retry(
        action, "s.t", "append", RetryPolicy(attempts=5), sleep=waits.append,
        on_retry=lambda n, c, w: retries.append((n, c.exception)),
    )  # fmt: skip
    assert result == "ok" and len(calls) == 3
    assert retries == [(1, "ConcurrentAppendException"), (2, "ConcurrentAppendException")]
    assert len(waits) == 2 and waits[1] > 0


def test_retries_are_bounded():
    def action():
        raise RuntimeError(APPEND_CONFLICT)

    with pytest.raises(DeltaConflictError, match=r"s\.t: MERGE .* after 3 attempts"):
        run_with_retry(action, "s.t", "MERGE", RetryPolicy(attempts=3), sleep=lambda _: None)


def test_metadata_change_is_not_retried_and_names_table_and_operation():
    calls = []

    def action():
        calls.append(1)
        raise RuntimeError(METADATA_CONFLICT)

    with pytest.raises(DeltaConflictError) as raised:
        run_with_retry(action, "`s`.`t`", "INSERT INTO of model.x", sleep=lambda _: None)
    assert len(calls) == 1
    message = str(raised.value)
    assert "`s`.`t`" in message and "INSERT INTO of model.x" in message
    assert "concurrent ADD COLUMNS" in message and "MetadataChangedException" in message


def test_other_errors_pass_through_untouched():
    def action():
        raise ValueError("boom")

    with pytest.raises(ValueError, match="boom"):
        run_with_retry(action, "t", "x", sleep=lambda _: None)


def test_protocol_change_message():
    conflict = classify("ProtocolChangedException: The protocol version changed")
    message = conflict_message(conflict, "s.t", "OPTIMIZE")
    assert "protocol" in message and "s.t" in message and "a concurrent commit" in message


@pytest.mark.parametrize(
    ("sql", "verb", "table", "retried"),
    [
        ('/* {"app": "dbt"} */\nmerge into `s`.`t` as t using', "merge into", "`s`.`t`", RETRYABLE),
        ("insert into s.t select 1", "insert into", "s.t", RETRYABLE),
        ("optimize `s`.`t` zorder by (a)", "optimize", "`s`.`t`", RETRYABLE),
        (
            "create or replace table s.t using delta as select 1",
            "create or replace table",
            "s.t",
            frozenset(CONFLICTS),
        ),
        (
            "insert overwrite table s.t select 1",
            "insert overwrite table",
            "s.t",
            frozenset(CONFLICTS),
        ),
        ("alter table s.t set tblproperties ('a'='b')", "alter table", "s.t", frozenset()),
        ("create table s.t (a int) using delta", "create table", "s.t", frozenset()),
        ("select 1", None, None, frozenset()),
    ],
)
def test_statements_that_are_retried(sql, verb, table, retried):
    assert describe_statement(sql) == (verb, table)
    assert retried_on(verb) == retried


def test_a_whole_table_replace_is_retried_on_a_metadata_conflict():
    """Two writers replacing one table: the loser's MetadataChangedException is retried (the
    replace is run again from scratch), not reported as 'Not retried'."""
    calls = []

    def replace() -> str:
        calls.append(1)
        if len(calls) < 3:
            raise RuntimeError(METADATA_CONFLICT)
        return "replaced"

    sql = "/* {} */ create or replace table `s`.`t` using delta as select 1"
    assert run_statement(replace, sql, "model.p.t", sleep=lambda _: None) == "replaced"
    assert len(calls) == 3


def test_a_replace_that_keeps_losing_says_so_after_the_last_attempt():
    def replace() -> None:
        raise RuntimeError(METADATA_CONFLICT)

    sql = "create or replace table s.t using delta as select 1"
    policy = RetryPolicy(attempts=3)
    with pytest.raises(DeltaConflictError) as raised:
        run_statement(replace, sql, "model.p.t", policy, sleep=lambda _: None)
    message = str(raised.value)
    assert "CREATE OR REPLACE TABLE of model.p.t still conflicted" in message
    assert "after 3 attempts (MetadataChangedException)" in message and "s.t" in message


def test_statements_that_are_not_retried_run_once():
    calls = []

    def alter() -> None:
        calls.append(1)
        raise RuntimeError(METADATA_CONFLICT)

    with pytest.raises(RuntimeError, match="DELTA_METADATA_CHANGED"):
        run_statement(alter, "alter table s.t add columns (b int)", "model.p.t")
    assert len(calls) == 1
