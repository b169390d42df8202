"""What an incremental run changes on an existing Delta table so that it matches its model's
config, decided here as plain data; the macro get_reconcile_delta_table_sql renders the SQL.

One config object per concern, read from the same properties on both sides (desired: what
get_delta_table_properties returns; current: the table's SHOW TBLPROPERTIES), with a diff of
the desired against the current. The project records what it set (sparkdelta.managed_properties,
sparkdelta.managed_constraints) and removes only that: properties and constraints that Delta,
Spark or someone else put on the table are never touched. Values compare as given (strings).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

CONSTRAINT_PREFIX = "delta.constraints."
MANAGED_PROPERTIES = "sparkdelta.managed_properties"
MANAGED_CONSTRAINTS = "sparkdelta.managed_constraints"


def recorded_names(properties: Mapping[str, str], key: str) -> tuple[str, ...]:
    """The names a bookkeeping property lists, comma-separated (absent or empty: none)."""
    return tuple(name for name in (properties.get(key) or "").split(",") if name)


@dataclass(frozen=True)
class TableProperties:
    """All of a table's properties; its CHECK constraints' keys are CheckConstraints' to change."""

    properties: Mapping[str, str]

    @property
    def managed(self) -> tuple[str, ...]:
        return recorded_names(self.properties, MANAGED_PROPERTIES)

    def to_set(self, current: TableProperties) -> dict[str, str]:
        """The desired properties, other than constraints, that the table lacks or has with
        another value (the bookkeeping keys included)."""
        return {
            key: value
            for key, value in self.properties.items()
            if not key.startswith(CONSTRAINT_PREFIX) and current.properties.get(key) != value
        }

    def to_unset(self, current: TableProperties) -> list[str]:
        """The keys the project set before, which the config no longer has and the table still
        has; any other key of the table stays."""
        return [
            key
            for key in current.managed
            if key not in self.properties and key in current.properties
        ]


@dataclass(frozen=True)
class CheckConstraints:
    """A table's CHECK constraints (name -> expression, its delta.constraints.<name> keys) and
    the names of those the project added."""

    constraints: Mapping[str, str]
    managed: tuple[str, ...] = ()

    @classmethod
    def from_properties(cls, properties: Mapping[str, str]) -> CheckConstraints:
        return cls(
            {
                key[len(CONSTRAINT_PREFIX) :]: value
                for key, value in properties.items()
                if key.startswith(CONSTRAINT_PREFIX)
            },
            recorded_names(properties, MANAGED_CONSTRAINTS),
        )

    def to_drop(self, current: CheckConstraints) -> list[str]:
        """The project's constraints on the table that left the config or changed (Delta cannot
        alter a constraint: a changed one is dropped, then added again)."""
        return [
            name
            for name in current.managed
            if name in current.constraints
            and self.constraints.get(name) != current.constraints[name]
        ]

    def to_add(self, current: CheckConstraints) -> dict[str, str]:
        """The configured constraints the table lacks or has with another expression."""
        return {
            name: expression
            for name, expression in self.constraints.items()
            if current.constraints.get(name) != expression
        }


@dataclass(frozen=True)
class LiquidClustering:
    """A table's liquid clustering columns, in order (none: not clustered)."""

    columns: tuple[str, ...]

    def cluster_by(self, current: LiquidClustering) -> list[str] | None:
        """The columns to CLUSTER BY (an empty list: NONE); None when the table's are these."""
        return None if self.columns == current.columns else list(self.columns)


def delta_table_changes(
    desired: Mapping[str, str],
    current: Mapping[str, str],
    desired_clustering: Sequence[str],
    current_clustering: Sequence[str],
) -> dict[str, Any]:
    """What brings a table in line with its config: `set_properties` {key: value},
    `unset_properties` [key], `drop_constraints` [name], `add_constraints` {name: expression},
    `cluster_by` [column] or None (unchanged). The macro runs the removals first, then the
    SET (which records what the project manages), then the additions and the clustering.

    `desired`: get_delta_table_properties; `current`: SHOW TBLPROPERTIES of the table;
    the clusterings: the config's `liquid_clustered_by` and DESCRIBE DETAIL's clusteringColumns.
    """
    wanted, existing = TableProperties(desired), TableProperties(current)
    wanted_checks = CheckConstraints.from_properties(desired)
    existing_checks = CheckConstraints.from_properties(current)
    clustering = LiquidClustering(tuple(desired_clustering))
    return {
        "set_properties": wanted.to_set(existing),
        "unset_properties": wanted.to_unset(existing),
        "drop_constraints": wanted_checks.to_drop(existing_checks),
        "add_constraints": wanted_checks.to_add(existing_checks),
        "cluster_by": clustering.cluster_by(LiquidClustering(tuple(current_clustering))),
    }


# --- column types: which change of an existing column Delta can apply in place ----------------

TYPE_WIDENING = "delta.enableTypeWidening"
_INTEGRAL_SIZES = {"tinyint": 1, "byte": 1, "smallint": 2, "short": 2, "int": 4, "integer": 4,
                   "bigint": 8, "long": 8}  # fmt: skip


def _decimal(data_type: str) -> tuple[int, int] | None:
    """(precision, scale) of a decimal type string, None for another type."""
    text = data_type.replace(" ", "").lower()
    if text in ("decimal", "dec", "numeric"):
        return 10, 0
    for prefix in ("decimal(", "dec(", "numeric("):
        if text.startswith(prefix) and text.endswith(")"):
            precision, _, scale = text[len(prefix) : -1].partition(",")
            return int(precision), int(scale or 0)
    return None


def is_delta_widening(from_type: str, to_type: str) -> bool:
    """Whether Delta's type widening changes a column from `from_type` to `to_type` in place
    (Delta 4.0: TypeWidening.isTypeChangeSupportedForSchemaEvolution): a wider integer, float
    to double, date to timestamp_ntz, a decimal with no fewer integer digits and no smaller
    scale."""
    source, target = from_type.replace(" ", "").lower(), to_type.replace(" ", "").lower()
    if source in _INTEGRAL_SIZES and target in _INTEGRAL_SIZES:
        return _INTEGRAL_SIZES[source] <= _INTEGRAL_SIZES[target]
    if (source, target) in {("float", "double"), ("real", "double"), ("date", "timestamp_ntz")}:
        return True
    source_decimal, target_decimal = _decimal(source), _decimal(target)
    if source_decimal and target_decimal:
        (p1, s1), (p2, s2) = source_decimal, target_decimal
        return p2 - s2 >= p1 - s1 and s2 >= s1
    return False


def column_type_problem(from_type: str, to_type: str, table_properties: Mapping[str, str]) -> str:
    """Why a column cannot change from `from_type` to `to_type` in place on a table with these
    properties; empty when Delta can widen it."""
    if not is_delta_widening(from_type, to_type):
        return (
            f"{from_type} -> {to_type} is not a widening Delta applies in place (a narrower or "
            f"another type would rewrite or lose values): cast the column to {from_type} in the "
            "model, or rebuild the table with --full-refresh"
        )
    if str(table_properties.get(TYPE_WIDENING, "false")).lower() != "true":
        return (
            f"{from_type} -> {to_type} is a widening, which Delta applies in place only on a "
            f"table with type widening: add tblproperties {{'{TYPE_WIDENING}': 'true'}} to the "
            "model (readers without the typeWidening feature, such as delta-rs 1.6, then refuse "
            "the table), or rebuild the table with --full-refresh"
        )
    return ""
