"""Delta DDL from model config: features, properties, constraints and clustering in the first
commit, and drift reconciliation on later runs. Checked on the tables themselves."""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path

import pytest

from lakehouse.delta.conformance import check_conformance, claimed_features
from lakehouse.delta.log import DeltaLog

ROWS = "select * from values (1, 'a', 10), (2, 'b', 20), (3, 'c', 30) as t(id, name, amount)"


def model_sql(config: str, sql: str = ROWS) -> str:
    return f"{{{{ config({config}) }}}}\n{sql}\n"


class TestFeaturesAndProperties:
    def test_first_load_is_in_the_change_feed_and_row_tracked(self, scratch_project):
        p = scratch_project
        p.model(
            "features",
            model_sql(
                "unique_key='id', tblproperties={'delta.enableChangeDataFeed': true, "
                "'delta.enableRowTracking': 'true', 'delta.enableDeletionVectors': 'true', "
                "'quality': 'silver'}, delta_features=['inCommitTimestamp', 'v2Checkpoint']"
            ),
        )
        p.dbt("run", "-s", "features")
        detail = p.detail("features")
        assert {"changeDataFeed", "rowTracking", "deletionVectors"} <= set(detail.tableFeatures)
        assert {"inCommitTimestamp", "v2Checkpoint"} <= set(detail.tableFeatures)
        assert len(p.history("features")) == 1, "features must come with the first write"
        changes = p.rows(f"select id from table_changes('{p.schema}.features', 0)")
        assert sorted(r.id for r in changes) == [1, 2, 3]
        row_ids = p.rows(f"select _metadata.row_id as row_id from {p.relation('features')}")
        assert len({r.row_id for r in row_ids}) == 3 and None not in {r.row_id for r in row_ids}

    def test_removed_property_is_unset_and_delta_own_properties_stay(self, scratch_project):
        p = scratch_project
        p.model(
            "drift",
            model_sql(
                "unique_key='id', tblproperties={'delta.enableRowTracking': 'true', "
                "'team': 'sales', 'quality': 'bronze'}"
            ),
        )
        p.dbt("run", "-s", "drift")
        own = {
            k: v for k, v in p.tblproperties("drift").items() if k.startswith("delta.rowTracking.")
        }
        assert own, "row tracking sets its own materialized-column properties"

        p.model(
            "drift",
            model_sql(
                "unique_key='id', tblproperties={'delta.enableRowTracking': 'true', "
                "'quality': 'silver', 'delta.appendOnly': 'false'}"
            ),
        )
        p.dbt("run", "-s", "drift")
        properties = p.tblproperties("drift")
        assert "team" not in properties
        assert properties["quality"] == "silver"
        assert properties["delta.appendOnly"] == "false"
        assert {k: properties[k] for k in own} == own
        operations = [r.operation for r in p.history("drift")]
        assert {"SET TBLPROPERTIES", "UNSET TBLPROPERTIES"} <= set(operations)

    def test_unknown_feature_is_a_compile_error_naming_the_model(self, scratch_project):
        p = scratch_project
        p.model("bad_feature", model_sql("delta_features=['timeTravelTurbo']"))
        result = p.dbt("run", "-s", "bad_feature", expect_success=False)
        message = str(result.result[0].message)
        assert "model.scratch.bad_feature" in message and "timeTravelTurbo" in message
        assert p.rows(f"show tables in {p.schema} like 'bad_feature'") == []


class TestTablePropertiesFromDetail:
    """Reconciliation reads a table's properties from DESCRIBE DETAIL alone where that gives
    exactly SHOW TBLPROPERTIES (table features included); checked on real tables of several
    protocols."""

    TABLES = {
        # name: (table properties, expected protocol uses reader and writer features)
        "legacy": ("'quality' = 'bronze'", False),
        "cdf_legacy": ("'delta.enableChangeDataFeed' = 'true'", False),
        "writer_features": ("'delta.feature.inCommitTimestamp' = 'supported'", False),
        "dv": ("'delta.enableDeletionVectors' = 'true', 'team' = 'sales'", True),
        "silver_like": (
            "'delta.enableChangeDataFeed' = 'true', 'delta.enableRowTracking' = 'true', "
            "'delta.enableDeletionVectors' = 'true', 'delta.constraints.positive' = 'amount > 0', "
            "'delta.feature.allowColumnDefaults' = 'supported', "
            "'delta.feature.v2Checkpoint' = 'supported', 'sparkdelta.managed_properties' = 'x'",
            True,
        ),
    }

    def test_derived_properties_equal_show_tblproperties(self, scratch_project):
        from dbt.adapters.sparkdelta.impl import properties_from_detail

        p = scratch_project
        p.rows(f"create schema if not exists `{p.schema}`")
        derived = {}
        for name, (properties, _) in self.TABLES.items():
            p.rows(f"drop table if exists {p.relation(name)}")
            p.rows(
                f"create table {p.relation(name)} (id int, amount int) using delta "
                f"tblproperties ({properties})"
            )
            p.rows(f"insert into {p.relation(name)} values (1, 10)")
            detail = p.detail(name).asDict(recursive=True)
            derived[name] = properties_from_detail(detail)
            if derived[name] is not None:
                assert derived[name] == p.tblproperties(name), name
        # derived exactly where the protocol lists reader and writer features; never guessed
        assert {name for name, props in derived.items() if props is not None} == {
            name for name, (_, features) in self.TABLES.items() if features
        }
        assert derived["silver_like"]["delta.feature.allowColumnDefaults"] == "supported"
        assert derived["silver_like"]["delta.constraints.positive"] == "amount > 0"


class TestConstraints:
    def test_constraints_are_in_the_first_commit_and_enforced(self, scratch_project):
        p = scratch_project
        p.write(
            "models/checked.yml",
            """
version: 2
models:
  - name: checked
    constraints:
      - type: check
        name: amount_positive
        expression: "amount > 0"
    columns:
      - name: id
        constraints:
          - type: not_null
""",
        )
        p.model("checked", model_sql("unique_key='id'"))
        p.dbt("run", "-s", "checked")
        properties = p.tblproperties("checked")
        assert properties["delta.constraints.amount_positive"] == "amount > 0"
        assert properties["delta.constraints.id_not_null"] == "`id` is not null"
        assert len(p.history("checked")) == 1

        version = len(p.history("checked"))
        p.model(
            "checked", model_sql("unique_key='id'", "select 4 as id, 'd' as name, -5 as amount")
        )
        result = p.dbt("run", "-s", "checked", expect_success=False)
        assert "amount_positive" in str(result.result[0].message)
        assert len(p.history("checked")) == version, "a rejected batch must not commit"
        assert p.count("checked") == 3

    def test_constraint_changes_are_applied_on_incremental_runs(self, scratch_project):
        p = scratch_project
        p.write(
            "models/checked.yml",
            """
version: 2
models:
  - name: checked
    constraints:
      - type: check
        name: amount_small
        expression: "amount < 1000"
""",
        )
        p.model("checked", model_sql("unique_key='id'"))
        p.dbt("run", "-s", "checked")
        properties = p.tblproperties("checked")
        assert properties["delta.constraints.amount_small"] == "amount < 1000"
        assert "delta.constraints.amount_positive" not in properties
        assert "delta.constraints.id_not_null" not in properties

    def test_unenforceable_constraints_are_built_recorded_and_warned_about(self, scratch_project):
        """dbt's semantics for constraints a platform cannot enforce: the model is built and a
        warning says so; the adapter records them as dbt.constraint.* table properties (and
        unsets them when they leave the config). not_null stays enforced."""
        p = scratch_project
        p.write(
            "models/pk.yml",
            """
version: 2
models:
  - name: pk
    constraints:
      - type: foreign_key
        columns: [name]
        expression: other_schema.customers (customer_name)
    columns:
      - name: id
        constraints:
          - type: primary_key
          - type: not_null
      - name: name
        constraints:
          - type: unique
            name: name_is_unique
""",
        )
        p.model("pk", model_sql("unique_key='id'"))
        warnings: list[str] = []

        def collect(event) -> None:
            if event.info.name == "JinjaLogWarning":
                warnings.append(event.info.msg)

        result = p.runner.invoke("run", "-s", "pk", callbacks=[collect])
        assert result.success, result.exception
        properties = p.tblproperties("pk")
        assert properties["dbt.constraint.primary_key_id"] == "primary_key (id)"
        assert properties["dbt.constraint.name_is_unique"] == "unique (name)"
        assert properties["dbt.constraint.foreign_key_name"] == (
            "foreign_key (name) references other_schema.customers (customer_name)"
        )
        assert properties["delta.constraints.id_not_null"] == "`id` is not null"
        [warning] = [w for w in warnings if "model.scratch.pk" in w]
        assert "does not enforce" in warning and "dbt.constraint.primary_key_id" in warning

        p.write("models/pk.yml", "version: 2\nmodels:\n  - name: pk\n")
        p.dbt("run", "-s", "pk")
        assert not [k for k in p.tblproperties("pk") if k.startswith("dbt.constraint.")]


def column_defaults(project, name: str) -> dict[str, str]:
    """{column: default expression} from the "# Column Default Values" part of DESCRIBE."""
    rows = project.rows(f"describe table extended {project.relation(name)}")
    names = [r.col_name for r in rows]
    if "# Column Default Values" not in names:
        return {}
    section = rows[names.index("# Column Default Values") + 1 :]
    return {r.col_name: r.comment for r in section if r.col_name and not r.col_name.startswith("#")}


class TestColumnDefaults:
    def test_table_model_gets_defaults_and_column_mapping(self, scratch_project):
        p = scratch_project
        p.model(
            "defaulted_table",
            model_sql(
                "materialized='table', column_defaults={'name': \"'unknown'\", 'amount': '0'}, "
                "tblproperties={'delta.columnMapping.mode': 'name'}"
            ),
        )
        p.dbt("run", "-s", "defaulted_table")
        detail = p.detail("defaulted_table")
        assert {"allowColumnDefaults", "columnMapping"} <= set(detail.tableFeatures)
        assert column_defaults(p, "defaulted_table") == {"name": "'unknown'", "amount": "0"}
        p.rows(f"insert into {p.relation('defaulted_table')} (id) values (4)")
        assert p.rows(f"select name, amount from {p.relation('defaulted_table')} where id = 4")[
            0
        ] == ("unknown", 0)
        # the data came with the first commit; the defaults follow in their own commits
        operations = [r.operation for r in reversed(p.history("defaulted_table"))]
        assert operations[0] == "CREATE OR REPLACE TABLE AS SELECT"
        assert operations[1:3] == ["CHANGE COLUMN", "CHANGE COLUMN"]

    def test_incremental_model_defaults_are_reconciled(self, scratch_project):
        p = scratch_project
        config = "unique_key='id', column_defaults={defaults}"
        p.model(
            "defaulted",
            model_sql(
                config.format(defaults="{'name': \"'new'\", 'amount': '-1'}"),
            ),
        )
        p.dbt("run", "-s", "defaulted")
        assert column_defaults(p, "defaulted") == {"name": "'new'", "amount": "-1"}
        version = p.history("defaulted")[0].version
        p.dbt("run", "-s", "defaulted")
        rerun = [r.operation for r in p.history("defaulted") if r.version > version]
        assert "CHANGE COLUMN" not in rerun, "unchanged defaults are not set again"

        p.model("defaulted", model_sql(config.format(defaults="{'name': \"'open'\"}")))
        p.dbt("run", "-s", "defaulted")
        assert column_defaults(p, "defaulted") == {"name": "'open'"}
        p.rows(f"insert into {p.relation('defaulted')} (id) values (9)")
        assert p.rows(f"select name, amount from {p.relation('defaulted')} where id = 9")[0] == (
            "open",
            None,
        )

    @pytest.mark.parametrize(
        "defaults, fragment",
        [
            ("{'colour': 1}", "colour, which is not a column of"),
            ("['name']", "must map column names to SQL expressions"),
            ("{'name': ''}", "`column_defaults` of name is empty"),
        ],
    )
    def test_wrong_defaults_name_the_model_and_column(self, scratch_project, defaults, fragment):
        p = scratch_project
        p.model("bad_default", model_sql(f"materialized='table', column_defaults={defaults}"))
        result = p.dbt("run", "-s", "bad_default", expect_success=False)
        message = str(result.result[0].message)
        assert "model.scratch.bad_default" in message and fragment in message


class TestLayout:
    def test_liquid_clustering_is_created_and_changed(self, scratch_project):
        p = scratch_project
        p.model("clustered", model_sql("unique_key='id', liquid_clustered_by=['name']"))
        p.dbt("run", "-s", "clustered")
        assert list(p.detail("clustered").clusteringColumns) == ["name"]
        p.model("clustered", model_sql("unique_key='id', liquid_clustered_by=['amount', 'id']"))
        p.dbt("run", "-s", "clustered")
        assert list(p.detail("clustered").clusteringColumns) == ["amount", "id"]

    def test_optimize_after_build_z_orders_the_write_in_the_same_run(self, scratch_project):
        p = scratch_project
        spread = "select /*+ repartition(4) */ id, id % 7 as amount from range(4000)"
        p.model("z_ordered", model_sql("optimize_after_build=true, zorder_by=['amount']", spread))
        p.model("left_alone", model_sql("materialized='table'", spread))
        p.dbt("run", "-s", "z_ordered", "left_alone")
        # the write made four files; OPTIMIZE, right after it in the same run, made one
        [write, optimize] = sorted(p.history("z_ordered"), key=lambda commit: commit.version)
        assert optimize.operation == "OPTIMIZE", write.operation
        assert json.loads(optimize.operationParameters["zOrderBy"]) == ["amount"]
        assert optimize.operationMetrics["numRemovedFiles"] == "4"
        assert p.detail("z_ordered").numFiles == 1 and p.count("z_ordered") == 4000
        assert [c.operation for c in p.history("left_alone")] == [write.operation]

    def test_partitioning_and_clustering_together_is_rejected(self, scratch_project):
        p = scratch_project
        p.model("both", model_sql("partition_by='name', liquid_clustered_by=['id']"))
        result = p.dbt("run", "-s", "both", expect_success=False)
        message = str(result.result[0].message)
        assert "model.scratch.both" in message and "partition_by" in message


ORDERS = (
    "select * from values (10, timestamp'2026-03-01 09:30:00', 5.0), "
    "(11, timestamp'2026-03-02 23:59:00', 7.5) as t(order_id, ordered_at, amount)"
)
COMPUTED = (
    "identity_columns={'order_sk': {}}, "
    "generated_columns={'order_date': {'expression': 'cast(ordered_at as date)', "
    "'data_type': 'date'}}"
)


class TestIdentityAndGeneratedColumns:
    """Delta computes them: the table created by SQL DDL with its column list (a CTAS cannot
    carry them), filled by an INSERT of the model's own columns; rebuilt by an INSERT OVERWRITE
    while its definition is the model's."""

    def rows(self, p, name: str) -> list[tuple]:
        return [
            tuple(row)
            for row in p.rows(
                f"select order_sk, order_id, order_date from {p.relation(name)} order by order_sk"
            )
        ]

    def test_table_and_incremental_models_get_values_from_delta(self, scratch_project):
        p = scratch_project
        p.model(
            "orders_keyed",
            model_sql(
                f"materialized='table', {COMPUTED}, tblproperties="
                "{'delta.enableChangeDataFeed': 'true'}",
                ORDERS,
            ),
        )
        p.model(
            "orders_merged",
            model_sql(
                f"materialized='incremental', unique_key='order_id', {COMPUTED}",
                ORDERS + "\n{% if is_incremental() %} union all select 12, "
                "timestamp'2026-03-03 08:00:00', 1.0 {% endif %}",
            ),
        )
        p.model(
            "orders_appended",
            model_sql(
                f"materialized='incremental', incremental_strategy='append', {COMPUTED}", ORDERS
            ),
        )
        names = ("orders_keyed", "orders_merged", "orders_appended")
        p.dbt("run", "-s", *names)
        for name in names:
            detail = p.detail(name)
            assert {"identityColumns", "generatedColumns"} <= set(detail.tableFeatures), name
            # Delta's values: keys from 1 up, the date derived from the timestamp
            assert self.rows(p, name) == [(1, 10, date(2026, 3, 1)), (2, 11, date(2026, 3, 2))], (
                name
            )
        assert "changeDataFeed" in p.detail("orders_keyed").tableFeatures
        # the first commit's schema carries what Delta computes (protocol: column metadata)
        log = Path(p.detail("orders_merged").location.removeprefix("file:")) / "_delta_log"
        first = [json.loads(line) for line in (log / f"{0:020}.json").read_text().splitlines()]
        schema = json.loads(next(a["metaData"] for a in first if "metaData" in a)["schemaString"])
        metadata = {field["name"]: field["metadata"] for field in schema["fields"]}
        assert metadata["order_sk"]["delta.identity.start"] == 1
        assert metadata["order_sk"]["delta.identity.allowExplicitInsert"] is False
        assert metadata["order_date"]["delta.generationExpression"] == "cast(ordered_at as date)"

        built = p.history("orders_keyed")[0].version
        p.dbt("run", "-s", *names)
        # a rebuilt table whose definition is the model's: one INSERT OVERWRITE, so no version
        # is empty; Delta numbers its rows after the keys it gave before
        [rebuild] = [c for c in p.history("orders_keyed") if c.version > built]
        assert rebuild.operationParameters["mode"] == "Overwrite", rebuild
        keys = [row[0] for row in self.rows(p, "orders_keyed")]
        assert len(set(keys)) == 2 and min(keys) > 2, keys
        # --full-refresh re-creates it (CREATE OR REPLACE, then the INSERT): keys from 1
        p.dbt("run", "-s", "orders_keyed", "--full-refresh")
        assert self.rows(p, "orders_keyed")[0][0] == 1
        # an incremental model keeps its keys and Delta numbers the new rows after them
        assert self.rows(p, "orders_merged") == [
            (1, 10, date(2026, 3, 1)),
            (2, 11, date(2026, 3, 2)),
            (3, 12, date(2026, 3, 3)),
        ]
        keys = [row[0] for row in self.rows(p, "orders_appended")]
        assert len(keys) == 4 and len(set(keys)) == 4 and keys[:2] == [1, 2]

    def test_delta_rejects_values_that_break_the_rules(self, scratch_project):
        p = scratch_project
        p.model("orders_checked", model_sql(f"materialized='table', {COMPUTED}", ORDERS))
        p.dbt("run", "-s", "orders_checked")
        table = p.relation("orders_checked")
        with pytest.raises(Exception, match="DELTA_IDENTITY_COLUMNS_EXPLICIT_INSERT_NOT_SUPPORTED"):
            p.rows(
                f"insert into {table} (order_sk, order_id, ordered_at, amount) "
                "values (99, 13, timestamp'2026-03-04 10:00:00', 1.0)"
            )
        with pytest.raises(Exception, match=r"CHECK constraint Generated Column \(order_date"):
            p.rows(
                f"insert into {table} (order_id, ordered_at, amount, order_date) "
                "values (13, timestamp'2026-03-04 10:00:00', 1.0, date'2020-01-01')"
            )
        assert p.count("orders_checked") == 2

        # a rebuild whose rows Delta refuses: as one INSERT OVERWRITE (the same definition) it
        # commits nothing; after a CREATE OR REPLACE (another definition: a new property) the
        # failed INSERT puts the table back (RESTORE); either way readers keep their rows
        wrong = ORDERS.replace("select *", "select *, date'2020-01-01' as order_date")
        kept = [(1, 10, date(2026, 3, 1)), (2, 11, date(2026, 3, 2))]
        version = p.history("orders_checked")[0].version
        for config, last in (
            (COMPUTED, "WRITE"),
            (f"{COMPUTED}, tblproperties={{'delta.appendOnly': 'false'}}", "RESTORE"),
        ):
            p.model("orders_checked", model_sql(f"materialized='table', {config}", wrong))
            result = p.dbt("run", "-s", "orders_checked", expect_success=False)
            said = str(result.result[0].message)
            assert "orders_checked" in said and "Generated Column (order_date" in said, said
            assert self.rows(p, "orders_checked") == kept
            assert p.history("orders_checked")[0].operation == last
        assert p.history("orders_checked")[2].version == version  # the overwrite added none

        # a new table whose first INSERT fails is not left behind empty
        p.model("orders_never", model_sql(f"materialized='table', {COMPUTED}", wrong))
        p.dbt("run", "-s", "orders_never", expect_success=False)
        assert not p.rows(f"show tables in {table.rsplit('.', 1)[0]} like 'orders_never'")

    def test_an_enforced_contract_declares_the_columns_delta_computes(self, scratch_project):
        p = scratch_project
        p.model(
            "orders_contracted",
            model_sql(
                "materialized='table', contract={'enforced': true}, identity_columns=['order_sk'], "
                "generated_columns={'order_date': 'cast(ordered_at as date)'}",
                ORDERS,
            ),
        )
        columns = [
            ("order_date", "date"),
            ("order_sk", "bigint"),
            ("order_id", "int"),
            ("ordered_at", "timestamp"),
            ("amount", "decimal(2,1)"),
        ]
        listed = "".join(f"      - {{name: {n}, data_type: '{t}'}}\n" for n, t in columns)
        p.write(
            "models/orders_contracted.yml",
            f"models:\n  - name: orders_contracted\n    columns:\n{listed}",
        )
        p.dbt("run", "-s", "orders_contracted")
        # the contract's order, its types, and the date Delta derived (no data_type in config)
        described = p.rows(f"describe table {p.relation('orders_contracted')}")
        assert [(r[0], r[1]) for r in described[: len(columns)]] == columns
        assert self.rows(p, "orders_contracted")[0] == (1, 10, date(2026, 3, 1))

        # a contract that leaves out a computed column is refused before anything is written
        without_key = "".join(line for line in listed.splitlines(True) if "order_sk" not in line)
        p.write(
            "models/orders_contracted.yml",
            f"models:\n  - name: orders_contracted\n    columns:\n{without_key}",
        )
        result = p.dbt("run", "-s", "orders_contracted", expect_success=False)
        assert "order_sk not declared in the model's contract" in str(result.result[0].message)
        assert p.history("orders_contracted")[0].operation == "WRITE"

    def test_bad_config_is_refused_naming_model_and_column(self, scratch_project):
        # every refusal is unit-tested (dbt-sparkdelta/tests/unit); this one reaches the user
        p = scratch_project
        p.model(
            "orders_bad", model_sql("materialized='table', identity_columns=['order_id']", ORDERS)
        )
        result = p.dbt("run", "-s", "orders_bad", expect_success=False)
        said = str(result.result[0].message)
        assert "orders_bad" in said and "leave it out of the model's SELECT" in said, said


ICEBERG_COMPAT = (
    "materialized='table', tblproperties={'delta.columnMapping.mode': 'name', "
    "'delta.enableIcebergCompatV2': 'true'}"
)


class TestIcebergCompatV2:
    """icebergCompatV2 without UniForm (open-source Delta 4.0.1 has no Iceberg module): data
    files written so that an Iceberg reader could use them, checked by the log inspector."""

    def test_a_model_gets_the_feature_and_its_log_meets_the_writer_rules(self, scratch_project):
        p = scratch_project
        rows = (
            "select id, name, amount, array(name, 'x') as tags from values "
            + ROWS.split("values ", 1)[1]
        )
        p.model("iceberg_ready", model_sql(ICEBERG_COMPAT, rows))
        p.dbt("run", "-s", "iceberg_ready")
        p.dbt("run", "-s", "iceberg_ready")  # a replace keeps it
        detail = p.detail("iceberg_ready")
        assert {"icebergCompatV2", "columnMapping"} <= set(detail.tableFeatures)
        assert "deletionVectors" not in detail.tableFeatures
        properties = p.tblproperties("iceberg_ready")
        assert check_conformance(DeltaLog(detail.location), properties) == []
        assert claimed_features(properties) == ["columnMapping", "icebergCompatV2"]
        assert p.count("iceberg_ready") == 3

    def test_deletion_vectors_beside_it_are_refused_and_nothing_is_created(self, scratch_project):
        p = scratch_project
        config = ICEBERG_COMPAT.replace("}", ", 'delta.enableDeletionVectors': 'true'}")
        p.model("iceberg_with_dvs", model_sql(config))
        result = p.dbt("run", "-s", "iceberg_with_dvs", expect_success=False)
        said = str(result.result[0].message)
        assert "iceberg_with_dvs" in said and "no deletion vectors" in said, said
        schema = p.relation("iceberg_with_dvs").rsplit(".", 1)[0]
        assert not p.rows(f"show tables in {schema} like 'iceberg_with_dvs'")
