"""Spark errors reach the dbt user as the message, without py4j's preamble or the JVM stack."""

from __future__ import annotations

from dbt.adapters.sparkdelta.connections import without_jvm_stack

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
