"""Errors at the user's line (lakehouse.dbt_errors, lakehouse.dbt_runner.failures): Spark's
positions parsed, the compiled line mapped back to the model's file, a unit test's error in its
model blamed on the model, the compiled SQL never repeated, skipped nodes in one line. The
messages are built the way dbt and Spark build them (no Spark, no dbt run)."""

from __future__ import annotations

import re
from types import SimpleNamespace

from lakehouse.dbt_errors import (
    ErrorSite,
    Failure,
    SourceFile,
    error_site,
    located,
    located_error,
    short_message,
    skipped_line,
    source_column,
    source_line,
    summary,
)
from lakehouse.dbt_runner import failures
from lakehouse.settings import PROJECT_DIR

MODEL_PATH = "models/marts/fct_orders.sql"
SOURCE = (PROJECT_DIR / MODEL_PATH).read_text()
# The edit: a column left without its trailing comma.
GOOD = "        order_statuses.status_name,"
BAD = "        order_statuses.status_name"
BROKEN = SOURCE.replace(GOOD, BAD, 1)
BROKEN_LINE = SOURCE.splitlines().index(GOOD) + 1
NEXT_LINE = "        order_statuses.is_final as is_status_final,"


def rendered(source: str, relation=lambda name: f"`lakehouse`.`{name}`") -> str:
    """The model compiled as dbt does: its `{#- -#}` comment gone with the whitespace after it,
    its config() call rendered empty, each ref() rendered in place."""
    source = re.sub(r"\{#-.*?-#\}\s*", "", source, flags=re.DOTALL)
    source = re.sub(r"\{\{\s*config\(.*?\)\s*\}\}", "", source, flags=re.DOTALL)
    return re.sub(r"\{\{ ref\('(\w+)'\) \}\}", lambda m: relation(m.group(1)), source)


def model_statement(source: str) -> str:
    """What the adapter runs for a table model: its compiled SQL wrapped in a CREATE."""
    return (
        '/* {"app": "dbt", "node_id": "model.lakehouse.fct_orders"} */\n'
        "create or replace table `dev_ann`.`fct_orders`\n    using delta\n"
        "    tblproperties ('delta.enableChangeDataFeed' = 'true')\n    as\n"
        f"{rendered(source)}"
    )


def unit_test_statement(source: str) -> str:
    """What a unit test runs: the model's SQL with its inputs as injected CTEs, inside dbt's
    get_unit_test_sql (actual vs expected)."""
    fixtures = ",  ".join(
        f"__dbt__cte__{name} as (\n-- Fixture for {name}\nselect \n    \n    \n"
        f"        cast(1 as int) as {name}_id\n    \nunion all\nselect \n"
        f"        cast(2 as int) as {name}_id\n)"
        for name in ("int_orders_deduplicated", "int_order_lines_deduplicated")
    )
    main = rendered(source, relation=lambda name: f"__dbt__cte__{name}")
    main = main.replace("with\n", f"with {fixtures}, \n", 1)
    return (
        "-- Build actual result given inputs\nwith dbt_internal_unit_test_actual as (\n"
        "  select\n    order_id,line_count, 'actual' as `actual_or_expected`\n  from (\n"
        f"    {main}\n  ) _dbt_internal_unit_test_actual\n),\n"
        "-- Build expected result\ndbt_internal_unit_test_expected as (\n  select\n"
        "    order_id, line_count, 'expected' as `actual_or_expected`\n  from (\n"
        "    select cast(1 as int) as order_id, cast(2 as int) as line_count\n"
        "  ) _dbt_internal_unit_test_expected\n)\n"
        "select * from dbt_internal_unit_test_actual\nunion all\n"
        "select * from dbt_internal_unit_test_expected"
    )


def parse_error(statement: str, line: int, pos: int, text: str = "near 'order_statuses'") -> str:
    """Spark's ParseException message: the error, its position, the statement echoed with a
    `---^^^` marker under the failing line."""
    lines = statement.split("\n")
    echo = "\n".join(lines[:line]) + "\n" + "-" * pos + "^^^\n" + "\n".join(lines[line:])
    return (
        f"\n[PARSE_SYNTAX_ERROR] Syntax error at or near {text}. SQLSTATE: 42601 "
        f"(line {line}, pos {pos})\n\n== SQL ==\n{echo}\n"
    )


def dbt_error(heading: str, message: str) -> str:
    """dbt's DbtRuntimeError text: a heading, then every line of the message indented."""
    lines = message.split("\n")
    return heading + "\n" + "\n".join("  " + line for line in lines)


def unit_test_error(statement: str, line: int, pos: int) -> str:
    inner = dbt_error("Runtime Error", parse_error(statement, line, pos))
    hint = (
        "An error occurred during execution of unit test "
        "'fct_orders_sums_lines_and_keeps_orders_without_lines'. There may be an error in the "
        "unit test definition: check the data types.\n " + inner
    )
    return dbt_error(
        "Runtime Error in unit_test fct_orders_sums_lines_and_keeps_orders_without_lines "
        "(models/marts/_marts__models.yml)",
        hint,
    )


def failing_line(statement: str) -> int:
    """Where Spark stops on the edit: the line after the missing comma."""
    return statement.split("\n").index(NEXT_LINE) + 1


# --- Spark's positions ------------------------------------------------------------------------


def test_a_parse_error_gives_its_line_position_and_the_failing_line():
    statement = model_statement(BROKEN)
    line = failing_line(statement)
    site = error_site(
        dbt_error("Runtime Error in model fct_orders (x)", parse_error(statement, line, 8))
    )
    assert site is not None
    assert (site.line, site.position, site.text) == (line, 8, NEXT_LINE)
    assert "\n".join(site.statement) == statement.rstrip("\n")


def test_an_analysis_errors_query_context_gives_the_fragment():
    message = (
        "[UNRESOLVED_COLUMN.WITH_SUGGESTION] A column, variable, or function parameter with name "
        "`orders`.`ordr_id` cannot be resolved. Did you mean one of the following? "
        "[`orders`.`order_id`]. SQLSTATE: 42703; line 45 pos 8;\n'Project ['orders.ordr_id]\n"
        "+- 'UnresolvedRelation [orders]\n\n== SQL (line 45, position 9) ==\n"
        "...        orders.ordr_id,\n           ^^^^^^^^^^^^^^\n"
    )
    site = error_site(dbt_error("Runtime Error in model fct_orders (x)", message))
    assert site == ErrorSite(45, 8, None, "orders.ordr_id")
    source = SOURCE.replace("orders.order_id,", "orders.ordr_id,", 1)
    assert source_line(source, site) == SOURCE.splitlines().index("        orders.order_id,") + 1


def test_positions_without_text():
    assert error_site("boom (line 3, pos 4)") == ErrorSite(3, 4)
    assert error_site("[UNRESOLVED_COLUMN] x. SQLSTATE: 42703; line 7 pos 2;\n'Project") == (
        ErrorSite(7, 2)
    )
    assert error_site("no position here") is None


# --- the compiled line mapped back to the source ---------------------------------------------


def test_a_models_parse_error_maps_to_the_edited_line_through_the_wrapper():
    statement = model_statement(BROKEN)
    site = error_site(parse_error(statement, failing_line(statement), 8))
    # Spark stops on the line after the missing comma: that line of the source, not line 60 of
    # the statement.
    assert source_line(BROKEN, site) == BROKEN_LINE + 1
    assert site.line != BROKEN_LINE + 1


def test_a_line_jinja_rendered_maps_to_its_source_line():
    source = SOURCE.replace(
        "select * from {{ ref('order_statuses') }}", "select * frm {{ ref('order_statuses') }}"
    )
    statement = model_statement(source)
    line = statement.split("\n").index("    select * frm `lakehouse`.`order_statuses`") + 1
    site = error_site(parse_error(statement, line, 13, "'frm'"))
    expected = source.splitlines().index("    select * frm {{ ref('order_statuses') }}") + 1
    assert source_line(source, site) == expected
    assert source_column(source, expected, site) is None  # no column in what Jinja rewrote


def test_a_unit_tests_statement_maps_into_the_model_and_its_inputs_do_not():
    statement = unit_test_statement(BROKEN)
    site = error_site(parse_error(statement, failing_line(statement), 8))
    assert source_line(BROKEN, site) == BROKEN_LINE + 1
    # an error in an input's rows (the fixture CTEs) is not the model's
    fixture = statement.split("\n").index("-- Fixture for int_order_lines_deduplicated") + 2
    assert source_line(BROKEN, error_site(parse_error(statement, fixture, 0))) is None
    # nor one in dbt's wrapper around it
    wrapper = statement.split("\n").index("dbt_internal_unit_test_expected as (") + 1
    assert source_line(BROKEN, error_site(parse_error(statement, wrapper, 0))) is None


def test_a_repeated_line_is_told_apart_by_its_place():
    source = (
        "with\n\na as (\n    select 1 as x\n),\n\nb as (\n    select 1 as x\n)\n\nselect * from b\n"
    )
    statement = "create table t as\n" + source.replace(
        "b as (\n    select 1 as x", "b as (\n    select 1 as x", 1
    )
    # the second "select 1 as x" (source line 8) is statement line 9
    site = error_site(parse_error(statement, 9, 4))
    assert site.text == "    select 1 as x"
    assert source_line(source, site) == 8


# --- what the user reads ---------------------------------------------------------------------


def test_a_unit_test_that_ran_into_its_models_syntax_error_blames_the_model():
    statement = unit_test_statement(BROKEN)
    message = unit_test_error(statement, failing_line(statement), 8)
    failure = Failure(
        "unit_test",
        "fct_orders_sums_lines_and_keeps_orders_without_lines",
        "models/marts/_marts__models.yml",
        message,
        SourceFile(MODEL_PATH, BROKEN),
    )
    said = located(failure)
    first = said.splitlines()[0]
    assert first.startswith(f"{MODEL_PATH} line {BROKEN_LINE + 1}: [PARSE_SYNTAX_ERROR]"), said
    assert f"{BROKEN_LINE + 1} | {NEXT_LINE}" in said
    # the column Spark gave, under the line as written
    gutter = f"    {BROKEN_LINE + 1} | "
    assert said.splitlines()[2] == " " * (len(gutter) - 2) + "| " + " " * 8 + "^", said
    assert "fct_orders_sums_lines_and_keeps_orders_without_lines" in said
    # not the unit test's definition, not the compiled SQL, not its position in it
    assert "check the data types" not in said
    assert "__dbt__cte__" not in said and "== SQL" not in said and "^^^" not in said
    assert "(line " not in said
    assert len(said.splitlines()) == 4


def test_a_unit_tests_own_error_names_the_unit_test_and_its_model():
    statement = unit_test_statement(BROKEN)
    fixture = statement.split("\n").index("-- Fixture for int_order_lines_deduplicated") + 2
    message = unit_test_error(statement, fixture, 0)
    failure = Failure(
        "unit_test", "fct_orders_sums", "models/marts/_marts__models.yml", message,
        SourceFile(MODEL_PATH, BROKEN),
    )  # fmt: skip
    said = located(failure)
    assert said.startswith(
        f"unit test fct_orders_sums (models/marts/_marts__models.yml) of {MODEL_PATH}: "
        "An error occurred during execution of unit test"
    ), said
    assert "== SQL" not in said and len(said.splitlines()) == 1


def test_a_models_jinja_error_is_at_its_template_line():
    template_line = "    select * from {{ ref('int_orders_deduplicated') }}"
    line = SOURCE.splitlines().index(template_line) + 1
    message = dbt_error(
        f"Compilation Error in model fct_orders ({MODEL_PATH})",
        f"expected token 'end of print statement', got 'x'\n  line {line}\n"
        "    {{ ref('a') x }}",
    )
    failure = Failure("model", "fct_orders", MODEL_PATH, message, SourceFile(MODEL_PATH, SOURCE))
    said = located(failure)
    assert said.startswith(f"{MODEL_PATH} line {line}: expected token 'end of print"), said
    assert f"{line} | {template_line}" in said
    # the same when the whole project does not parse (the invocation's own error)
    assert located_error(message).startswith(f"{MODEL_PATH} line {line}: expected token")


def test_an_error_without_a_position_names_the_node_and_its_file():
    failure = Failure(
        "model", "fct_orders", MODEL_PATH,
        dbt_error("Runtime Error in model fct_orders (x)", "[CAST_INVALID_INPUT] 'x' is bad"),
        SourceFile(MODEL_PATH, SOURCE),
    )  # fmt: skip
    assert located(failure) == f"model fct_orders ({MODEL_PATH}): [CAST_INVALID_INPUT] 'x' is bad"
    test = Failure(
        "test", "unique_fct_orders_order_id", "models/x.yml", "Got 2 results", None, "fail"
    )
    assert located(test) == "test unique_fct_orders_order_id (models/x.yml): fail: Got 2 results"


def test_an_analysis_errors_plan_and_positions_are_left_out():
    message = (
        "[UNRESOLVED_COLUMN] A column `x` cannot be resolved. SQLSTATE: 42703; line 3 pos 7;\n"
        "'Project ['x]\n+- OneRowRelation\n"
    )
    assert (
        short_message(message)
        == "[UNRESOLVED_COLUMN] A column `x` cannot be resolved. SQLSTATE: 42703"
    )


def test_skipped_nodes_in_one_line():
    skipped = [
        ("model", "fct_orders"),
        ("test", "not_null_fct_orders_order_id"),
        ("model", "fct_customer_revenue"),
        ("unit_test", "fct_orders_sums"),
        ("test", "unique_fct_orders_order_id"),
    ]
    assert skipped_line(skipped) == (
        "5 nodes skipped: 2 models (fct_orders, fct_customer_revenue), 2 data tests, 1 unit test"
    )
    assert skipped_line([("model", f"m{i}") for i in range(10)]) == (
        "10 nodes skipped: 10 models (m0, m1, m2, m3, m4, m5, m6, m7, ...)"
    )
    assert skipped_line([]) is None
    assert summary([], []) == "no node failed (see dbt's log)"


# --- dbt's results ---------------------------------------------------------------------------


def node(resource_type: str, name: str, **fields) -> SimpleNamespace:
    return SimpleNamespace(
        resource_type=resource_type, name=name, unique_id=f"{resource_type}.lakehouse.{name}",
        **fields,
    )  # fmt: skip


def test_failures_of_a_build_blame_the_model_and_summarise_the_skipped(tmp_path):
    statement = unit_test_statement(BROKEN)
    unit_test = node(
        "unit_test", "fct_orders_sums", original_file_path="models/marts/_marts__models.yml",
        model="fct_orders", depends_on=SimpleNamespace(nodes=["model.lakehouse.fct_orders"]),
    )  # fmt: skip
    model = node("model", "fct_orders", original_file_path=MODEL_PATH, raw_code=BROKEN,
                 compiled_code=None)  # fmt: skip
    children = [node("model", "fct_customer_revenue"), node("test", "unique_fct_orders_order_id")]
    results = [
        SimpleNamespace(
            node=unit_test,
            status="error",
            message=unit_test_error(statement, failing_line(statement), 8),
        ),
        SimpleNamespace(node=model, status="skipped", message=None),
        *(SimpleNamespace(node=child, status="skipped", message=None) for child in children),
        SimpleNamespace(node=node("model", "stg_x"), status="success", message="OK"),
    ]
    said = failures(SimpleNamespace(exception=None, result=results))
    lines = said.splitlines()
    assert lines[0].startswith(f"{MODEL_PATH} line {BROKEN_LINE + 1}: [PARSE_SYNTAX_ERROR]")
    assert lines[-1] == "3 nodes skipped: 2 models (fct_orders, fct_customer_revenue), 1 data test"
    assert "None" not in said and "create or replace" not in said and len(lines) == 5


def test_a_unit_test_run_alone_finds_its_model_in_the_manifest(tmp_path):
    import json

    manifest = tmp_path / "manifest.json"
    manifest.write_text(json.dumps({"nodes": {"model.lakehouse.fct_orders": {
        "original_file_path": MODEL_PATH, "raw_code": BROKEN}}}))  # fmt: skip
    statement = unit_test_statement(BROKEN)
    unit_test = node(
        "unit_test", "fct_orders_sums", original_file_path="models/marts/_marts__models.yml",
        model="fct_orders", depends_on=SimpleNamespace(nodes=["model.lakehouse.fct_orders"]),
    )  # fmt: skip
    message = unit_test_error(statement, failing_line(statement), 8)
    result = SimpleNamespace(
        exception=None, result=[SimpleNamespace(node=unit_test, status="error", message=message)]
    )
    assert failures(result, manifest).startswith(f"{MODEL_PATH} line {BROKEN_LINE + 1}:")
    assert failures(result).startswith("unit test fct_orders_sums")  # no manifest: the unit test


def test_the_thrift_servers_java_wrapping_is_dropped():
    over_thrift = (
        "Runtime Error\n  org.apache.hive.service.cli.HiveSQLException: Error running query: "
        "[PARSE_SYNTAX_ERROR] org.apache.spark.sql.catalyst.parser.ParseException: "
        "[PARSE_SYNTAX_ERROR] Syntax error at or near 'as'. SQLSTATE: 42601 (line 54, pos 42)"
    )
    assert short_message(over_thrift) == (
        "[PARSE_SYNTAX_ERROR] Syntax error at or near 'as'. SQLSTATE: 42601"
    )
