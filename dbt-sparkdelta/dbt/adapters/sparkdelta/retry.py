"""The one retry policy for Delta's optimistic-concurrency conflicts (pure: no Spark needed).

Delta commits optimistically: a writer that loses the race gets a conflict exception. Whether
trying again is safe depends on what was written, so callers say what they do:

- statements that replace what they write (CREATE OR REPLACE TABLE, INSERT OVERWRITE: a table
  model, a Python model's write, a seed): retried on every Delta conflict. Run again from
  scratch, such a statement writes what it would have written after the other writer, whatever
  that writer changed (data, schema, properties, protocol): the last replace wins, nothing is
  half-applied;
- MERGE, INSERT INTO (blind appends, made idempotent by `txnAppId`/`txnVersion`), OPTIMIZE
  (compaction changes no data) and the change-feed consumer (its MERGE and watermark are one
  commit, re-evaluated on retry): retried when the conflict is about data files
  (`ConcurrentAppendException`, `ConcurrentDeleteReadException`,
  `ConcurrentDeleteDeleteException`, `ConcurrentTransactionException`); never when the table's
  metadata or protocol changed under the writer (`MetadataChangedException`,
  `ProtocolChangedException`): the write was planned against a schema, properties or features
  that no longer hold. It fails with a message that names the table, the write and the
  conflicting operation.

Retries use bounded exponential backoff with jitter (RetryPolicy: 6 attempts in all unless the
profile's `conflict_retries` says otherwise), each retry logged.

Conflicts are recognised by exception class name or by Delta's error class (`[DELTA_...]`), so
the same code works for py4j, Spark Connect and Thrift errors.
"""

from __future__ import annotations

import json
import logging
import random
import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

log = logging.getLogger(__name__)
T = TypeVar("T")

# Delta exception class -> its error class (Delta 4.0.1, verified by the reliability tests).
CONFLICTS = {
    "ConcurrentAppendException": "DELTA_CONCURRENT_APPEND",
    "ConcurrentDeleteReadException": "DELTA_CONCURRENT_DELETE_READ",
    "ConcurrentDeleteDeleteException": "DELTA_CONCURRENT_DELETE_DELETE",
    "ConcurrentTransactionException": "DELTA_CONCURRENT_TRANSACTION",
    "ConcurrentWriteException": "DELTA_CONCURRENT_WRITE",
    "MetadataChangedException": "DELTA_METADATA_CHANGED",
    "ProtocolChangedException": "DELTA_PROTOCOL_CHANGED",
}
RETRYABLE = frozenset(
    {
        "ConcurrentAppendException",
        "ConcurrentDeleteReadException",
        "ConcurrentDeleteDeleteException",
        "ConcurrentTransactionException",
    }
)
WHAT_CHANGED = {
    "MetadataChangedException": "changed the table's metadata (schema, properties or constraints)",
    "ProtocolChangedException": "changed the table's protocol (its reader/writer features)",
    "ConcurrentWriteException": "committed a write this transaction depended on",
}


@dataclass(frozen=True)
class Conflict:
    """A Delta concurrency conflict recognised in an error."""

    exception: str  # Delta's exception class name, e.g. ConcurrentAppendException
    retryable: bool
    operation: str | None  # the conflicting commit's operation, e.g. OPTIMIZE, when Delta says


class DeltaConflictError(RuntimeError):
    """A conflict that is not retried, or a retryable one that outlasted the retries."""

    def __init__(self, message: str, conflict: Conflict):
        super().__init__(message)
        self.conflict = conflict


def classify(error: BaseException | str, retry_on: frozenset[str] = RETRYABLE) -> Conflict | None:
    """The Delta conflict an error reports, or None when it is not a concurrency conflict;
    retryable when its exception is one of `retry_on`."""
    text = error if isinstance(error, str) else f"{type(error).__name__}: {error}"
    for name, error_class in CONFLICTS.items():
        if name in text or f"[{error_class}" in text:
            return Conflict(name, name in retry_on, conflicting_operation(text))
    return None


def conflicting_operation(text: str) -> str | None:
    """The operation of the conflicting commit, from Delta's `Conflicting commit: {...}`."""
    found = re.search(r"Conflicting commit: (\{.*?\})(?:\s|$)", text, re.S)
    if found:
        try:
            return json.loads(found.group(1)).get("operation")
        except ValueError:
            pass
    found = re.search(r'"operation"\s*:\s*"([^"]+)"', text)
    return found.group(1) if found else None


def conflict_message(conflict: Conflict, table: str, action: str, attempts: int = 1) -> str:
    """One sentence naming the table, the write and the conflicting operation."""
    other = f"a concurrent {conflict.operation}" if conflict.operation else "a concurrent commit"
    if conflict.retryable:
        return (
            f"Delta table {table}: {action} still conflicted with {other} after {attempts} "
            f"attempts ({conflict.exception}); rerun when the other writers are done."
        )
    changed = WHAT_CHANGED.get(conflict.exception, "conflicted")
    return (
        f"Delta table {table}: {action} was not committed because {other} {changed} while it "
        f"ran ({conflict.exception}). Not retried: the write was planned against the old "
        "table; rerun it."
    )


@dataclass(frozen=True)
class RetryPolicy:
    """Bounded exponential backoff with jitter: attempt n waits up to base * 2**(n-1) seconds
    (capped at max_delay), minus a random share of up to `jitter` of it."""

    attempts: int = 6
    base_delay: float = 0.5
    max_delay: float = 8.0
    jitter: float = 0.5

    def delay(self, attempt: int, rand: Callable[[], float] = random.random) -> float:
        """Seconds to wait after failed attempt `attempt` (1-based)."""
        ceiling = min(self.max_delay, self.base_delay * 2 ** (attempt - 1))
        return ceiling * (1 - self.jitter * rand())


def run_with_retry(
    action: Callable[[], T],
    table: str,
    what: str,
    policy: RetryPolicy | None = None,
    sleep: Callable[[float], None] = time.sleep,
    rand: Callable[[], float] = random.random,
    on_retry: Callable[[int, Conflict, float], None] | None = None,
    retry_on: frozenset[str] = RETRYABLE,
) -> T:
    """Run `action` (a write that is safe to repeat) and retry it on the conflicts `retry_on`
    names (default: the data conflicts).

    Non-conflict errors pass through unchanged; a non-retryable conflict, or a retryable one
    after the last attempt, raises DeltaConflictError naming `table`, `what` and the
    conflicting operation.
    """
    policy = policy or RetryPolicy()
    for attempt in range(1, policy.attempts + 1):
        try:
            return action()
        except Exception as exc:
            conflict = classify(exc, retry_on)
            if conflict is None:
                raise
            if not conflict.retryable or attempt == policy.attempts:
                raise DeltaConflictError(
                    conflict_message(conflict, table, what, attempt), conflict
                ) from exc
            wait = policy.delay(attempt, rand)
            log.warning(
                "Delta conflict on %s: %s hit %s (concurrent %s); retry %d of %d in %.2fs",
                table,
                what,
                conflict.exception,
                conflict.operation or "commit",
                attempt,
                policy.attempts - 1,
                wait,
            )
            if on_retry is not None:
                on_retry(attempt, conflict, wait)
            sleep(wait)
    raise AssertionError("unreachable")  # pragma: no cover


# Which statements are Delta writes, and which of them are retried.
_LEADING_COMMENTS = re.compile(r"^\s*(?:/\*.*?\*/\s*|--[^\n]*\n\s*)*", re.S)
_STATEMENT = re.compile(
    r"(?P<verb>merge\s+(?:with\s+schema\s+evolution\s+)?into|insert\s+into(?:\s+table)?"
    r"|insert\s+overwrite(?:\s+table)?|optimize|create\s+or\s+replace\s+table"
    r"|create\s+table(?:\s+if\s+not\s+exists)?|delete\s+from|update|alter\s+table"
    r"|vacuum|restore\s+table|reorg\s+table|truncate\s+table)\s+(?P<table>[`\w.]+)",
    re.I,
)
# Statements that are safe to run again after a data conflict: Delta re-plans them against
# the new snapshot, so a retry equals running after the other writer.
RETRIED_VERBS = ("merge", "insert into", "optimize")
# Statements that replace what they write: safe to run again after any conflict (see above).
REPLACE_VERBS = ("create or replace table", "insert overwrite")


def describe_statement(sql: str) -> tuple[str | None, str | None]:
    """(verb, table) of a Delta write, e.g. ("merge into", "`s`.`t`"); (None, None) else."""
    found = _STATEMENT.match(_LEADING_COMMENTS.sub("", sql, count=1))
    if not found:
        return None, None
    verb = re.sub(r"\s+", " ", found.group("verb").lower())
    return verb, found.group("table")


def retried_on(verb: str | None) -> frozenset[str]:
    """The conflicts a statement of `verb` is retried on (empty: never retried)."""
    if verb is None:
        return frozenset()
    if verb.startswith(REPLACE_VERBS):
        return frozenset(CONFLICTS)
    if verb.startswith(RETRIED_VERBS):
        return RETRYABLE
    return frozenset()


def run_statement(
    action: Callable[[], T], sql: str, what: str, policy: RetryPolicy | None = None, **kwargs
) -> T:
    """Run `action`, which runs the statement `sql`, with the retries its kind allows (for
    statements not sent through the adapter's connection: a Python model's write)."""
    verb, table = describe_statement(sql)
    retry_on = retried_on(verb)
    if not retry_on:
        return action()
    what = f"{verb.upper()} of {what}"
    return run_with_retry(action, table, what, policy, retry_on=retry_on, **kwargs)
