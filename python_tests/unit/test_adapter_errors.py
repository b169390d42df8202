"""Spark errors reach the dbt user as the message, without py4j's preamble or the JVM stack."""

from __future__ import annotations

import datetime
import decimal

import pytest
from dbt_common.exceptions import DbtRuntimeError

from dbt.adapters.sparkdelta.connections import SparkDeltaConnectionManager
from dbt.adapters.sparkdelta.errors import (
    LOST_ERROR_CLASS,
    jvm_error_message,
    without_jvm_stack,
)
from dbt.adapters.sparkdelta.seeds import seed_value_text

PY4J_ERROR = (
    "An error occurred while calling o66.sql.\n"
    ": org.apache.spark.sql.delta.schema.DeltaInvariantViolationException: "
    "[DELTA_VIOLATE_CONSTRAINT_WITH_VALUES] CHECK constraint quantity_positive (quantity > 0) "
    "violated by row with values:\n - quantity : -2\n"
    "\tat org.apache.spark.sql.delta.schema.DeltaInvariantViolationException$.apply(X.scala:78)\n"
    "\tat org.apache.spark.scheduler.Task.run(Task.scala:147)\n"
    "\t... 21 more\n"
)


def test_constraint_violation_keeps_the_constraint_and_the_value():
    message = without_jvm_stack(PY4J_ERROR)
    assert message.startswith("[DELTA_VIOLATE_CONSTRAINT_WITH_VALUES] CHECK constraint")
    assert "quantity : -2" in message
    assert "at org.apache" not in message and "o66" not in message


def test_plain_messages_are_kept():
    message = "[TABLE_OR_VIEW_NOT_FOUND] The table `x` cannot be found."
    assert without_jvm_stack(message) == message


TASK_WRITE_FAILED = (
    "An error occurred while calling o66.sql.\n"
    ": org.apache.spark.SparkException: [TASK_WRITE_FAILED] Task failed while writing rows to "
    "file:/w/s.db/t. SQLSTATE: 58030\n"
    "\tat org.apache.spark.sql.errors.QueryExecutionErrors$.taskFailedWhileWritingRowsError(X)\n"
    "Caused by: org.apache.spark.SparkNumberFormatException: [CAST_INVALID_INPUT] The value "
    '\'seven\' of the type "STRING" cannot be cast to "INT" because it is malformed.\n'
    "\tat org.apache.spark.sql.errors.QueryExecutionErrors$.invalidInputInCastToNumberError(X)\n"
)


def test_a_failed_write_task_reports_its_root_cause():
    message = without_jvm_stack(TASK_WRITE_FAILED)
    assert message.startswith("[TASK_WRITE_FAILED]")
    assert "Caused by: [CAST_INVALID_INPUT] The value 'seven'" in message
    assert "\tat " not in message


UNRESOLVED_COLUMN = (
    "[UNRESOLVED_COLUMN.WITH_SUGGESTION] A column, variable, or function parameter with name "
    "`custmer_id` cannot be resolved. Did you mean one of the following? [`customer_id`, "
    "`order_id`]. SQLSTATE: 42703; line 1 pos 7;\n"
    "'Project ['custmer_id]\n"
    "+- SubqueryAlias spark_catalog.shop.orders\n"
    "   +- Relation spark_catalog.shop.orders[order_id#1,customer_id#2] parquet\n"
)


def test_an_analysis_error_loses_the_logical_plan_not_the_suggestion():
    message = without_jvm_stack(UNRESOLVED_COLUMN)
    assert message.endswith("SQLSTATE: 42703; line 1 pos 7")
    assert "Did you mean one of the following? [`customer_id`" in message
    assert "Relation" not in message and "'Project" not in message


def test_an_operation_error_has_no_dbt_prefix_and_is_cut_at_a_word():
    from dbt.adapters.sparkdelta.errors import MAX_ERROR_CHARS, short_error_message

    assert short_error_message(UNRESOLVED_COLUMN).endswith("line 1 pos 7")
    long = "[DELTA_X] " + "word " * 400
    cut = short_error_message(long)
    assert len(cut) <= MAX_ERROR_CHARS + 6 and cut.endswith("word [...]")


class _JavaException:
    """A py4j JavaObject of a JVM exception: only getMessage() matters here."""

    def __init__(self, message: str) -> None:
        self.message = message

    def getMessage(self) -> str:  # noqa: N802 (the JVM's name)
        return self.message


class _Py4JError(Exception):
    def __init__(self, java_message: str) -> None:
        super().__init__("An error occurred while calling o51.sql.")
        self.java_exception = _JavaException(java_message)


DELTA_MERGE_ERROR = (
    "[DELTA_MERGE_UNRESOLVED_EXPRESSION] Cannot resolve s.no_such_column in search condition "
    "given columns s.id, s.value, t.id, t.value."
)
LOST = (
    "[INTERNAL_ERROR] Cannot find main error class 'DELTA_MERGE_UNRESOLVED_EXPRESSION' "
    "SQLSTATE: XX000"
)


def _lost_delta_error() -> DbtRuntimeError:
    """The chain PySpark 4.0.1 and dbt-spark raise for a Delta error: the original py4j error,
    PySpark's INTERNAL_ERROR raised while converting it, dbt-spark's DbtRuntimeError."""
    try:
        try:
            try:
                raise _Py4JError(DELTA_MERGE_ERROR)
            except _Py4JError:
                raise _Py4JError(LOST) from None
        except _Py4JError as exc:
            raise DbtRuntimeError(LOST) from exc
    except DbtRuntimeError as exc:
        return exc


def test_a_delta_message_lost_by_pyspark_is_read_back_from_the_jvm_exception():
    assert jvm_error_message(_lost_delta_error()) == DELTA_MERGE_ERROR


def test_no_jvm_exception_in_the_chain_gives_nothing():
    assert jvm_error_message(DbtRuntimeError(LOST)) is None


def test_the_connection_reports_delta_s_message(monkeypatch):
    manager = SparkDeltaConnectionManager.__new__(SparkDeltaConnectionManager)
    monkeypatch.setattr(manager, "get_if_exists", lambda: None, raising=False)
    with pytest.raises(DbtRuntimeError) as raised:
        with manager.exception_handler("merge into t using s on t.id = s.no_such_column ..."):
            raise _lost_delta_error()
    assert raised.value.msg == DELTA_MERGE_ERROR
    assert LOST_ERROR_CLASS not in raised.value.msg


def test_seed_values_become_the_text_spark_casts():
    assert seed_value_text(None) is None
    assert seed_value_text("O'Brien \\ 'x'") == "O'Brien \\ 'x'"
    assert seed_value_text(decimal.Decimal("1E+2")) == "100"
    assert seed_value_text(decimal.Decimal("-2.50")) == "-2.50"
    assert seed_value_text(True) == "true"
    assert seed_value_text(datetime.date(2024, 2, 29)) == "2024-02-29"
    assert seed_value_text(datetime.datetime(2024, 2, 29, 13, 5, 1, 250000)) == (
        "2024-02-29 13:05:01.250000"
    )
