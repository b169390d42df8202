"""The `sparkdelta` adapter: dbt-spark's adapter with Python models on open-source Spark."""

from __future__ import annotations

import builtins
import re
import subprocess
from functools import cache
from typing import Any

from dbt.adapters.base import PythonJobHelper, available
from dbt.adapters.contracts.connection import AdapterResponse
from dbt.adapters.spark.connections import SparkConnectionMethod
from dbt.adapters.spark.impl import SparkAdapter
from dbt_common.exceptions import DbtRuntimeError

from dbt.adapters.sparkdelta.connections import SparkDeltaConnectionManager
from dbt.adapters.sparkdelta.python_submissions import (
    SessionPythonJobHelper,
    SparkConnectPythonJobHelper,
)

# Delta writes the value of this session setting into the commit it makes (DESCRIBE HISTORY
# column userMetadata).
USER_METADATA_CONF = "spark.databricks.delta.commitInfo.userMetadata"
SETTING_KEY = re.compile(r"[A-Za-z0-9_.]+")


@cache
def project_git_revision(project_root: str) -> str | None:
    try:
        result = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=project_root, capture_output=True, text=True
        )
    except OSError:  # no git on this machine
        return None
    return result.stdout.strip() if result.returncode == 0 else None


class SparkDeltaAdapter(SparkAdapter):
    ConnectionManager = SparkDeltaConnectionManager

    @available
    def execute_with_settings(self, sql: str, settings: dict[str, str]) -> AdapterResponse:
        """Run one statement with Spark session settings that apply to it alone.

        Settings are session-wide and sticky, so each is put back to its previous value (or
        reset) even when the statement fails: nothing leaks into later commits of the session
        (another model, a maintenance operation). Jinja has no try/finally, hence this method.
        """
        for key, value in settings.items():
            if not SETTING_KEY.fullmatch(key) or "\n" in value or ";" in value:
                raise DbtRuntimeError(f"Invalid session setting {key}={value!r}: one line, no ';'.")
        previous = {key: self._session_setting(key) for key in settings}
        for key, value in settings.items():
            self.execute(f"set {key} = {value}")
        try:
            response, _ = self.execute(sql)
        finally:
            for key, value in previous.items():
                self.execute(f"reset {key}" if value is None else f"set {key} = {value}")
        return response

    @available
    def execute_with_commit_metadata(self, sql: str, user_metadata: str) -> AdapterResponse:
        """Run one Delta write whose commit carries `user_metadata` (DESCRIBE HISTORY)."""
        return self.execute_with_settings(sql, {USER_METADATA_CONF: user_metadata})

    def _session_setting(self, key: str) -> str | None:
        _, table = self.execute(f"set {key}", fetch=True)
        value = table.rows[0][1]
        return None if value == "<undefined>" else value

    @classmethod
    def type(cls) -> str:
        return "sparkdelta"

    @property
    def default_python_submission_method(self) -> str:
        # In-process when dbt itself runs the session; over Spark Connect for remote Spark.
        credentials = self.config.credentials
        if credentials.python_submission_method:
            return credentials.python_submission_method
        if credentials.method == SparkConnectionMethod.SESSION:
            return "session"
        return "spark_connect"

    @property
    def python_submission_helpers(self) -> dict[str, builtins.type[PythonJobHelper]]:
        return {
            "session": SessionPythonJobHelper,
            "spark_connect": SparkConnectPythonJobHelper,
        }

    @available
    def git_revision(self) -> str | None:
        """The project's git commit, for commit provenance (None outside a git checkout)."""
        return project_git_revision(self.config.project_root)

    def generate_python_submission_response(self, submission_result: Any) -> AdapterResponse:
        # `code` records the submission method in run_results.json.
        return AdapterResponse(_message="OK", code=submission_result)

    @available
    def try_execute(self, sql: str) -> dict[str, Any]:
        """Run one statement and return {"table": agate.Table} or {"error": short message}.

        Maintenance operations go on with the next table after a failure and report every
        failure at the end; Jinja cannot catch an exception, so this returns it instead.
        """
        try:
            _, table = self.execute(sql, fetch=True)
        except Exception as exc:  # reported by the caller, table by table, then raised
            return {"error": short_error_message(str(exc))}
        return {"table": table}


def short_error_message(message: str) -> str:
    """The useful sentence of a Spark error, without the Thrift or JVM stack around it."""
    found = re.search(
        r"Error running query: (?:[\w.$]+(?:Exception|Error): )?(.+?)(?::\d+:\d+'|$)", message, re.S
    )
    text = found.group(1) if found else message
    # "[CODE] org.x.AnalysisException: [CODE] text" -> "[CODE] text"
    text = re.sub(r"\[[A-Z0-9_.]+\] (?=[\w.$]+(?:Exception|Error): )", "", text)
    text = re.sub(r"[\w.$]+(?:Exception|Error): ", "", text)
    text = text.replace("\\n", " ").replace("\n", " ")
    return re.sub(r"\s+", " ", text).strip()[:500]
