"""The `sparkdelta` adapter: dbt-spark's adapter with Delta Lake writes, commit provenance, the
change-feed protocol, and Python models on open-source Spark."""

from __future__ import annotations

import builtins
import dataclasses
import json
import re
import subprocess
from collections.abc import Iterator, Mapping
from contextlib import AbstractContextManager, contextmanager, nullcontext
from functools import cache
from typing import Any

from dbt.adapters.base import PythonJobHelper, available
from dbt.adapters.contracts.connection import AdapterResponse
from dbt.adapters.events.logging import AdapterLogger
from dbt.adapters.spark.connections import SparkConnectionMethod
from dbt.adapters.spark.impl import SparkAdapter
from dbt_common.exceptions import DbtRuntimeError

from dbt.adapters.sparkdelta import change_feed, generated_columns, relation_configs, seeds
from dbt.adapters.sparkdelta.connections import SparkDeltaConnectionManager
from dbt.adapters.sparkdelta.errors import short_error_message
from dbt.adapters.sparkdelta.python_submissions import (
    API_MODES,
    SessionPythonJobHelper,
    SparkConnectPythonJobHelper,
    connection_session,
    shared_connect_session,
)
from dbt.adapters.sparkdelta.spark_connect import ConnectConnectionWrapper

# Delta writes the value of this session setting into the commit it makes (DESCRIBE HISTORY
# column userMetadata).
USER_METADATA_CONF = "spark.databricks.delta.commitInfo.userMetadata"
RECORD_EMPTY_COMMITS_CONF = "spark.databricks.delta.skipRecordingEmptyCommits"
SETTING_KEY = re.compile(r"[A-Za-z0-9_.]+")
# dbt-spark's default file format is Parquet; this adapter's is Delta, for every node that
# writes data (`dbt clone` runs models, seeds and snapshots too).
DEFAULT_FILE_FORMAT = "delta"
DATA_NODE_TYPES = frozenset({"model", "seed", "snapshot"})
logger = AdapterLogger("SparkDelta")


@cache
def project_git_revision(project_root: str) -> str | None:
    try:
        result = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=project_root, capture_output=True, text=True
        )
    except OSError:  # no git on this machine
        return None
    return result.stdout.strip() if result.returncode == 0 else None


@contextmanager
def _as_dbt_error(error: type[Exception]) -> Iterator[None]:
    """The adapter's own errors (they name the model and what to do) as dbt's error."""
    try:
        yield
    except error as exc:
        raise DbtRuntimeError(str(exc)) from None


class SparkDeltaAdapter(SparkAdapter):
    ConnectionManager = SparkDeltaConnectionManager

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # The INSERT that fills a table Delta's builder just replaced, and how to undo the
        # replace should it fail: (table, version before or None when new).
        self._undo_if_fails: dict[str, tuple[str, int | None]] = {}

    def pre_model_hook(self, config: Mapping[str, Any]) -> Any:
        """Delta unless the node asks for another file format; and every Delta commit the
        node makes tagged with where it came from (DESCRIBE HISTORY column userMetadata):
        dbt invocation id, node, target and git revision."""
        from dbt_common.invocation import get_invocation_id

        default_file_format(getattr(config, "model", None))
        default_cdf_check_cols(getattr(config, "model", None))

        connection = self.connections.get_if_exists()
        metadata = {
            "dbt_invocation_id": get_invocation_id(),
            "dbt_node": connection.name if connection is not None else None,
            "dbt_target": self.config.target_name,
            "git_revision": self.git_revision(),
        }
        self._set_commit_metadata(json.dumps(metadata).replace(";", ","))
        return super().pre_model_hook(config)

    def cleanup_connections(self) -> None:
        """At the end of a run: PySpark's classic API is this process's again (API_MODES)."""
        super().cleanup_connections()
        API_MODES.release()

    def post_model_hook(self, config: Mapping[str, Any], context: Any) -> None:
        """The tag never outlives its node (a later operation or model commits untagged)."""
        super().post_model_hook(config, context)
        self._set_commit_metadata(None)

    def _set_commit_metadata(self, value: str | None) -> None:
        """Set (or, with None, unset) the commit user metadata of the session. On the embedded
        session it is set in the session's configuration directly, as SET would, without a
        SQL statement per model; on remote methods with SET / RESET."""
        if self.connection_method() == "session":
            # Classic mode: not inside another thread's settings window, and PySpark's active
            # session is the embedded one (while a Connect model runs, it is the Connect one).
            with API_MODES.using("classic"):
                session = self._embedded_session()
                if session is not None:
                    if value is None:
                        session.conf.unset(USER_METADATA_CONF)
                    else:
                        session.conf.set(USER_METADATA_CONF, value)
                    return
        self.execute(
            f"reset {USER_METADATA_CONF}"
            if value is None
            else f"set {USER_METADATA_CONF} = {value}"
        )

    def _embedded_session(self) -> Any:
        """The in-process SparkSession dbt's SQL runs on (method `session`), else None."""
        if self.connection_method() != "session":
            return None
        from dbt.adapters.sparkdelta.session import active_session

        return active_session()

    @available
    def table_properties_from_detail(self, detail: Mapping[str, Any]) -> dict[str, str] | None:
        """SHOW TBLPROPERTIES of a Delta table, derived from its DESCRIBE DETAIL (see
        properties_from_detail); None when they cannot be derived."""
        return properties_from_detail(detail)

    @available
    def delta_table_changes(
        self,
        desired: Mapping[str, str],
        current: Mapping[str, str],
        desired_clustering: list[str],
        current_clustering: list[str],
    ) -> dict[str, Any]:
        """What brings an existing Delta table in line with its config, as data for the macro
        get_reconcile_delta_table_sql to render (see relation_configs.delta_table_changes)."""
        return relation_configs.delta_table_changes(
            desired, current, desired_clustering, current_clustering
        )

    @available
    def delta_column_type_problem(
        self, from_type: str, to_type: str, table_properties: Mapping[str, str]
    ) -> str:
        """Why an existing column cannot change type in place (empty when Delta widens it;
        see relation_configs.column_type_problem)."""
        return relation_configs.column_type_problem(from_type, to_type, table_properties)

    @available
    def execute_with_settings(self, sql: str, settings: dict[str, str]) -> AdapterResponse:
        """Run one statement with Spark session settings that apply to it alone.

        Settings are session-wide and sticky, so each is put back to its previous value (or
        reset) even when the statement fails: nothing leaks into later commits of the session
        (another model, a maintenance operation). Jinja has no try/finally, hence this method.
        """
        response, _ = self._execute_with_settings(sql, settings)
        return response

    def _execute_with_settings(
        self, sql: str, settings: dict[str, str], fetch: bool = False
    ) -> tuple[AdapterResponse, Any]:
        for key, value in settings.items():
            if not SETTING_KEY.fullmatch(key) or "\n" in value or ";" in value:
                raise DbtRuntimeError(f"Invalid session setting {key}={value!r}: one line, no ';'.")
        # The embedded session's settings are every dbt thread's: no other statement of this
        # process runs between this SET and RESET (a commit of another model would carry them).
        with self._embedded_alone():
            previous = {key: self._session_setting(key) for key in settings}
            for key, value in settings.items():
                self.execute(f"set {key} = {value}")
            try:
                return self.execute(sql, fetch=fetch)
            finally:
                for key, value in previous.items():
                    self.execute(f"reset {key}" if value is None else f"set {key} = {value}")

    @available
    def execute_with_commit_metadata(
        self, sql: str, user_metadata: str, record_empty: bool = False
    ) -> AdapterResponse:
        """Run one Delta write whose commit carries `user_metadata` (DESCRIBE HISTORY).
        `record_empty`: commit even when the write changes no row (Delta skips such commits),
        so the metadata alone is recorded."""
        settings = {USER_METADATA_CONF: user_metadata}
        if record_empty:
            settings[RECORD_EMPTY_COMMITS_CONF] = "false"
        return self.execute_with_settings(sql, settings)

    @available
    def cdf_watermark(self, model: str, relation: Any) -> dict[str, int] | None:
        """The upstream versions the data of a `cdf` model's table reflects (None when no
        commit carries a watermark); see change_feed.processed_watermark."""
        with _as_dbt_error(change_feed.ChangeFeedError):
            return self._histories().watermark(model, str(relation))

    @available
    def cdf_watermark_or_error(self, model: str, relation: Any) -> dict[str, Any]:
        """cdf_watermark for an operation that must go on when the model's table cannot give
        one (replaced or restored since its last run, so that run fails and asks for a full
        refresh): {"watermark": ..., "error": None} or {"watermark": None, "error": why}."""
        try:
            return {"watermark": self._histories().watermark(model, str(relation)), "error": None}
        except change_feed.ChangeFeedError as error:
            return {"watermark": None, "error": str(error)}

    @available
    def cdf_upstreams_unchanged(self, model: str, relation: Any, upstreams: list[str]) -> bool:
        """True when no upstream of a `cdf` model has a commit after its table's watermark
        (see change_feed.upstreams_unchanged): the run can skip the model."""
        histories = self._histories()
        with _as_dbt_error(change_feed.ChangeFeedError):
            watermark = histories.watermark(model, str(relation))
        return change_feed.upstreams_unchanged(histories, watermark, upstreams)

    @available
    def cdf_watermark_metadata(self, watermark: dict[str, int]) -> str:
        return change_feed.watermark_metadata(watermark)

    @available
    def cdf_read_plan(
        self, model: str, upstream: Any, target: Any | None, on_gap: str | None
    ) -> dict[str, Any]:
        """What a SQL `cdf` model reads of `upstream` in this run (see change_feed.read_plan);
        with changes to read, also the table's `location`: table_changes_by_path reads them,
        since in a query that also reads the table by name Delta resolves
        table_changes('<name>', ...) to the table itself (Spark's relation cache keys a read by
        name and time travel only), and a join of the changes with their table would silently
        get the table's rows on both sides."""
        with _as_dbt_error(change_feed.ChangeFeedError):
            plan = change_feed.read_plan(
                self._histories(), model, str(upstream), str(target) if target else None, on_gap
            )
        if plan["kind"] == "changes":
            _, detail = self.execute(f"describe detail {upstream}", fetch=True)
            plan["location"] = detail.rows[0]["location"]
        self._cdf_pins.setdefault(model, {})[plan["table"]] = plan["end"]
        return plan

    @available
    def cdf_pin_watermarked_upstreams(self, model: str, relation: Any) -> None:
        """Before a Python `cdf` model runs (it reads its upstreams itself, ChangeFeed): pin
        the newest version of each upstream its watermark names. It reads at least up to
        them, so a run with no change row may advance the watermark there, as the pins of a
        SQL model's cdf_read_plan do (else its next run reads those versions again)."""
        histories = self._histories()
        with _as_dbt_error(change_feed.ChangeFeedError):
            watermark = histories.watermark(model, str(relation)) or {}
        pins = self._cdf_pins.setdefault(model, {})
        for key in watermark:
            pins.setdefault(key, histories.newest(change_feed.quoted_key(key)).version)

    @available
    def cdf_pinned_versions(self, model: str) -> dict[str, int]:
        """The upstream versions this run of `model` pinned (cdf_read_plan), forgotten as they
        are read: with no change row to carry them, the strategy still advances the watermark
        over upstream commits that changed no data (an OPTIMIZE, a property change)."""
        return self._cdf_pins.pop(model, {})

    @property
    def _cdf_pins(self) -> dict[str, dict[str, int]]:
        if not hasattr(self, "_cdf_pinned"):
            self._cdf_pinned: dict[str, dict[str, int]] = {}
        return self._cdf_pinned

    def _histories(self) -> change_feed.Histories:
        """DESCRIBE HISTORY for one decision (not cached longer: a model run earlier in the same
        invocation may have committed to the tables since)."""

        def read(table: str, limit: int | None) -> list[change_feed.Commit]:
            sql = change_feed.describe_history_sql(table, limit)
            _, history = self.execute(sql, fetch=True)
            return [change_feed.Commit.from_row(dict(row.items())) for row in history.rows]

        return change_feed.Histories(read)

    def _session_setting(self, key: str) -> str | None:
        _, table = self.execute(f"set {key}", fetch=True)
        value = table.rows[0][1]
        return None if value == "<undefined>" else value

    def list_relations_without_caching(self, schema_relation: Any) -> list[Any]:
        """dbt-spark's listing, without the session's temporary views: SHOW TABLE EXTENDED
        lists them in every schema (with no schema of their own), so one left by a failed
        statement would enter dbt's cache of each schema listed in that session."""
        relations = super().list_relations_without_caching(schema_relation)
        return [relation for relation in relations if relation.schema]

    @available.parse(lambda *a, **k: [])
    def get_column_schema_from_query(self, sql: str) -> list[Any]:
        """The columns of a query with Spark's type names, which model contracts compare.

        Over Thrift, PyHive reports only a type class per column (ARRAY_TYPE, DECIMAL_TYPE),
        which cannot tell array<int> from array<string>: DESCRIBE QUERY asks Spark instead.
        """
        if self.config.credentials.method != SparkConnectionMethod.THRIFT:
            return super().get_column_schema_from_query(sql)
        _, cursor = self.connections.add_select_query(f"describe query {sql}")
        return [self.Column.create(name, data_type) for name, data_type, *_ in cursor.fetchall()]

    def _get_columns_for_catalog(self, relation: Any) -> list[dict[str, Any]]:
        """dbt-spark's catalog columns, with the comments persist_docs wrote: dbt-spark reads
        columns from SHOW TABLE EXTENDED, which has none, so `dbt docs` showed no column
        descriptions of the warehouse. One DESCRIBE per relation adds them."""
        columns = list(super()._get_columns_for_catalog(relation))
        if not columns:
            return columns
        try:
            rows = self.execute_macro("get_columns_in_relation_raw", kwargs={"relation": relation})
        except DbtRuntimeError as exc:  # e.g. dropped since it was listed
            logger.warning(f"No column comments in the catalog for {relation}: {exc.msg}")
            return columns
        comments = {}
        for name, _dtype, comment in (tuple(row)[:3] for row in rows):
            if not name or name.startswith("#"):  # the end of the column list
                break
            comments[name] = comment or None
        for column in columns:
            column["column_comment"] = comments.get(column["column_name"])
        return columns

    @available
    def plan_computed_columns(
        self,
        model_id: str,
        sql: str,
        identity_columns: Any,
        generated_columns_config: Any,
        contract_columns: Mapping[str, str | None] | None = None,
    ) -> list[dict[str, Any]]:
        """The columns of a model's table with identity or generated columns, in order (see
        generated_columns.plan_columns): the SELECT's columns are read from Spark."""
        selected = [
            (column.name, column.dtype) for column in self.get_column_schema_from_query(sql)
        ]
        with _as_dbt_error(generated_columns.GeneratedColumnsError):
            columns = generated_columns.plan_columns(
                model_id, identity_columns, generated_columns_config, selected, contract_columns
            )
        return [dataclasses.asdict(column) for column in columns]

    @available
    def computed_column_definitions(self, columns: list[dict[str, Any]]) -> str:
        """The CREATE TABLE column list of planned columns (generated_columns)."""
        return generated_columns.column_definitions(
            [generated_columns.Column.from_dict(column) for column in columns]
        )

    @available
    def create_table_with_computed_columns(
        self,
        model_id: str,
        relation: Any,
        create_sql: str,
        insert_sql: str,
        overwrite_sql: str | None = None,
        definition: str | None = None,
    ) -> str:
        """The statement that builds a model with identity / generated columns (a CTAS cannot
        carry them). When the table exists and its `sparkdelta.definition` property is
        `definition` (the digest of the model's column list, layout and properties), that is
        `overwrite_sql`, its INSERT OVERWRITE: one commit. Otherwise this runs `create_sql`, the
        CREATE OR REPLACE TABLE, and returns `insert_sql`, the INSERT that fills it: two
        commits; should the INSERT fail, the table goes back to the version it had before (or,
        new, is dropped) so that readers never keep an empty table (see `execute`)."""
        table = f"`{relation.schema}`.`{relation.identifier}`"
        previous = None
        if self.get_relation(relation.database, relation.schema, relation.identifier):
            if overwrite_sql and definition and self._definition(table) == definition:
                return overwrite_sql
            _, history = self.execute(f"describe history {table} limit 1", fetch=True)
            previous = history.rows[0]["version"]
        try:
            self.execute(create_sql)
        except DbtRuntimeError as exc:
            if explained := generated_columns.explain_refusal(model_id, str(exc)):
                raise DbtRuntimeError(explained) from None
            raise
        self._undo_if_fails[insert_sql.strip()] = (table, previous)
        return insert_sql

    def _definition(self, table: str) -> str | None:
        """The table's `sparkdelta.definition` property (None if it has none)."""
        _, properties = self.execute(f"show tblproperties {table}", fetch=True)
        values = {row[0]: row[1] for row in properties.rows}
        return values.get(generated_columns.DEFINITION_PROPERTY)

    def execute(
        self, sql: str, auto_begin: bool = False, fetch: bool = False, limit: int | None = None
    ) -> tuple[AdapterResponse, Any]:
        undo = self._undo_if_fails.pop(sql.strip(), None)
        if undo is None:
            return super().execute(sql, auto_begin, fetch, limit)
        try:
            return super().execute(sql, auto_begin, fetch, limit)
        except Exception:
            table, previous = undo
            super().execute(
                f"drop table if exists {table}"
                if previous is None
                else f"restore table {table} to version as of {previous}"
            )
            raise

    @available
    def merge_schema_evolution_settings(self) -> dict[str, str]:
        """The session settings a MERGE WITH SCHEMA EVOLUTION needs: none from Delta 4.4, which
        honours the clause; Delta 4.0 parses it and evolves nothing, so with an older Delta, or
        one the adapter cannot see (a remote endpoint's), the statement also gets autoMerge."""
        if self.connection_method() == "session":
            from dbt.adapters.sparkdelta.session import delta_release_at_least

            if delta_release_at_least("4.4"):
                return {}
        return {"spark.databricks.delta.schema.autoMerge.enabled": "true"}

    @available
    def connection_method(self) -> str:
        """The profile's connection method (`session`, `connect`, `thrift`, ...): dbt's `target`
        in Jinja carries only dbt-spark's connection keys, which leave it out."""
        return str(getattr(self.config.credentials.method, "value", self.config.credentials.method))

    @available
    def replace_seed_table(
        self, relation: str, head: str, view_columns: list[str], agate_table: Any, types: list[str]
    ) -> str:
        """Create or replace a Delta seed's table with its rows in one commit (seeds.py)."""
        with self._embedded_alone():
            return seeds.replace_table(
                self, self._seed_route(), relation, head, view_columns, agate_table, types
            )

    @available
    def insert_seed_rows(self, relation: str, agate_table: Any, types: list[str]) -> str:
        """Insert a seed's rows into its just created table of another format (seeds.py)."""
        with self._embedded_alone():
            return seeds.insert_rows(self, self._seed_route(), relation, agate_table, types)

    @available
    def seed_column_types(self, agate_table: Any, column_types: Mapping[str, str]) -> list[str]:
        """Each seed column's type: the seed's `column_types`, else dbt's inference."""
        return [
            column_types.get(name) or self.convert_type(agate_table, index)
            for index, name in enumerate(agate_table.column_names)
        ]

    def _embedded_alone(self) -> AbstractContextManager:
        """On the embedded session, this thread's work alone in PySpark's classic API: no
        Connect model flips the API mode under it (a seed's DataFrame), no other thread's
        statement runs between its settings and its commit (API_MODES). Elsewhere, nothing."""
        if self.connection_method() == "session":
            return API_MODES.using("classic", exclusive=True)
        return nullcontext()

    def _seed_route(self) -> seeds.SeedRoute:
        """The one decision of how seed rows travel, per connection method (see seeds.py)."""
        from dbt.adapters.sparkdelta.session import active_session

        method = self.connection_method()
        credentials = self.config.credentials
        if method in ("session", "connect"):
            session = active_session() if method == "session" else self._connect_session()
            if session is None:
                raise DbtRuntimeError(f"Seeds on `{method}`: no SparkSession to load them through.")
            return seeds.SeedRoute(session)
        if method == "thrift" and credentials.connect_url():
            session = shared_connect_session(credentials, credentials.connect_url())
            return seeds.SeedRoute(session, shared=True)
        # No SparkSession: the rows as bound parameters, with the driver's marker.
        return seeds.SeedRoute(None, binding_char="?" if method == "odbc" else "%s")

    def _connect_session(self) -> Any:
        """The Spark Connect session of this thread's connection (method `connect`), else None."""
        handle = getattr(self.connections.get_if_exists(), "handle", None)
        if isinstance(handle, ConnectConnectionWrapper):
            return handle.session
        if self.connection_method() == "connect":
            self.connections.get_thread_connection()  # its handle opens when first read
            return self._connect_session()
        return None

    def submit_python_job(self, parsed_model: dict, compiled_code: str) -> AdapterResponse:
        # On the connect method a Python model runs on the dbt connection's own Connect session
        # (same endpoint, same settings: commit provenance included) unless it names another.
        with connection_session(
            self._connect_session() if self.connection_method() == "connect" else None
        ):
            return super().submit_python_job(parsed_model, compiled_code)

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
    def try_execute(self, sql: str, settings: dict[str, str] | None = None) -> dict[str, Any]:
        """Run one statement (with session `settings` for it alone, as execute_with_settings)
        and return {"table": agate.Table} or {"error": short message}.

        Maintenance operations go on with the next table after a failure and report every
        failure at the end; Jinja cannot catch an exception, so this returns it instead.
        """
        try:
            _, table = self._execute_with_settings(sql, settings or {}, fetch=True)
        except Exception as exc:  # reported by the caller, table by table, then raised
            # dbt's exceptions print as "Runtime Error\n  <msg>": keep the message alone.
            return {"error": short_error_message(getattr(exc, "msg", None) or str(exc))}
        return {"table": table}


# Delta's SHOW TBLPROPERTIES: the table's configuration, the protocol versions and, for a protocol
# with table features, one delta.feature.<name> = 'supported' per feature (Snapshot.getProperties).
FEATURE_PREFIX = "delta.feature."


def default_file_format(node: Any) -> None:
    """Give a data node without `file_format` Delta, before its materialization reads the
    config: dbt-spark's materializations (table, seed, snapshot, clone) and ours then all see
    'delta', the one place this default is decided."""
    if getattr(node, "resource_type", None) not in DATA_NODE_TYPES:
        return
    node_config = node.config
    if not node_config.get("file_format"):
        node_config["file_format"] = DEFAULT_FILE_FORMAT


def default_cdf_check_cols(node: Any) -> None:
    """A `strategy: cdf` snapshot compares the columns the check strategy would: check_cols,
    'all' unless the snapshot names them (dbt's check strategy requires the setting)."""
    if getattr(node, "resource_type", None) != "snapshot":
        return
    if node.config.get("strategy") == "cdf" and not node.config.get("check_cols"):
        node.config["check_cols"] = "all"


def properties_from_detail(detail: Mapping[str, Any]) -> dict[str, str] | None:
    """What SHOW TBLPROPERTIES returns for a Delta table, from its DESCRIBE DETAIL row (as a
    dict): `properties`, `minReaderVersion`/`minWriterVersion` as delta.minReaderVersion and
    delta.minWriterVersion, and `tableFeatures` as delta.feature.<name> = 'supported'.

    Only for reader version 3 and writer version 7, where both reader and writer features are
    listed explicitly: DESCRIBE DETAIL's tableFeatures are then exactly the features SHOW
    TBLPROPERTIES lists. For older protocols tableFeatures also names features the versions
    imply, which SHOW TBLPROPERTIES does not list: None (run SHOW TBLPROPERTIES instead)."""
    try:
        reader, writer = int(detail["minReaderVersion"]), int(detail["minWriterVersion"])
    except (KeyError, TypeError, ValueError):
        return None
    if reader < 3 or writer < 7:
        return None
    properties = {
        str(key): str(value)
        for key, value in (detail.get("properties") or {}).items()
        if key != "path"
    }
    properties["delta.minReaderVersion"] = str(reader)
    properties["delta.minWriterVersion"] = str(writer)
    for feature in detail.get("tableFeatures") or []:
        properties[FEATURE_PREFIX + str(feature)] = "supported"
    return properties
