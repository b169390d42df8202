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
    from dbt.adapters.sparkdelta.impl import MAX_ERROR_CHARS, short_error_message

    assert short_error_message(UNRESOLVED_COLUMN).endswith("line 1 pos 7")
    long = "[DELTA_X] " + "word " * 400
    cut = short_error_message(long)
    assert len(cut) <= MAX_ERROR_CHARS + 6 and cut.endswith("word [...]")
