"""Identity and generated columns: columns whose values Delta computes on every write.

Delta 4.4's catalog declares Spark's identity- and generated-column capabilities, so
`GENERATED ALWAYS AS IDENTITY` and `GENERATED ALWAYS AS (expr)` work in SQL DDL on every
connection method; a CTAS cannot carry them. A model that declares them gets its table created
by `CREATE OR REPLACE TABLE` with its column list, then filled with an INSERT that names the
model's own columns: Delta fills in the rest. (Delta 4.0-4.3 refuse the DDL:
UNSUPPORTED_FEATURE.TABLE_OPERATION, which the adapter turns into a message naming 4.4.)

`plan_columns` decides the table's columns from the config, the SELECT's columns and the
contract; `column_definitions` writes them as DDL (both pure, unit-tested).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

# The table property holding the digest of the definition (column list, layout, properties) a
# model with computed columns was created with: a rebuild with the same one is an INSERT
# OVERWRITE (one commit), another one re-creates the table.
DEFINITION_PROPERTY = "sparkdelta.definition"


class GeneratedColumnsError(ValueError):
    """A model's identity_columns / generated_columns config that cannot be honoured."""


@dataclass(frozen=True)
class Identity:
    always: bool = True  # GENERATED ALWAYS (no explicit values) or BY DEFAULT
    start: int = 1
    step: int = 1


@dataclass(frozen=True)
class Column:
    name: str
    data_type: str
    identity: Identity | None = None
    expression: str | None = None  # generated column: GENERATED ALWAYS AS (expression)
    from_select: bool = True  # the model's SELECT gives its values (else Delta computes them)

    @classmethod
    def from_dict(cls, values: Mapping[str, Any]) -> Column:
        """The inverse of dataclasses.asdict (what the macros hand back)."""
        identity = values.get("identity")
        return cls(**{**values, "identity": Identity(**identity) if identity else None})


def _identity(model_id: str, name: str, spec: Any) -> Identity:
    if spec is None:
        spec = {}
    if not isinstance(spec, Mapping) or set(spec) - {"always", "start", "step"}:
        raise GeneratedColumnsError(
            f"Model {model_id}: identity_columns.{name} takes `always` (true: GENERATED ALWAYS, "
            f"false: BY DEFAULT), `start` and `step`, got {spec!r}."
        )
    always, start, step = spec.get("always", True), spec.get("start", 1), spec.get("step", 1)
    if not isinstance(always, bool):
        raise GeneratedColumnsError(
            f"Model {model_id}: identity_columns.{name}.always must be true or false."
        )
    for key, value in (("start", start), ("step", step)):
        if isinstance(value, bool) or not isinstance(value, int):
            raise GeneratedColumnsError(
                f"Model {model_id}: identity_columns.{name}.{key} must be an integer, "
                f"got {value!r}."
            )
    if step == 0:
        raise GeneratedColumnsError(f"Model {model_id}: identity_columns.{name}.step cannot be 0.")
    return Identity(always, start, step)


def _named(model_id: str, option: str, value: Any) -> dict[str, Any]:
    """The option as {column: spec}: a mapping as given, a list of names with empty specs."""
    if not value:
        return {}
    if isinstance(value, str):
        value = [value]
    if isinstance(value, Sequence) and all(isinstance(v, str) for v in value):
        return {name: None for name in value}
    if isinstance(value, Mapping):
        return dict(value)
    raise GeneratedColumnsError(
        f"Model {model_id}: `{option}` must be a list of column names or a mapping of column "
        f"to its settings, got {value!r}."
    )


def _expression(model_id: str, name: str, spec: Any) -> tuple[str, str | None]:
    """A generated column's (expression, data_type or None)."""
    if isinstance(spec, str) and spec.strip():
        return spec, None
    if (
        isinstance(spec, Mapping)
        and isinstance(spec.get("expression"), str)
        and (set(spec) <= {"expression", "data_type"})
    ):
        return spec["expression"], spec.get("data_type")
    raise GeneratedColumnsError(
        f"Model {model_id}: generated_columns.{name} must be a SQL expression, or "
        f"{{expression: ..., data_type: ...}}, got {spec!r}."
    )


def plan_columns(
    model_id: str,
    identity_columns: Any,
    generated_columns: Any,
    select_columns: Sequence[tuple[str, str]],
    contract_columns: Mapping[str, str | None] | None = None,
) -> list[Column]:
    """The columns of the table, in order: the contract's order when it is enforced
    (`contract_columns`: name -> data_type), else identity columns, the SELECT's columns, then
    generated columns the SELECT does not give. Names compare case-insensitively."""
    identities = {
        name.lower(): (name, _identity(model_id, name, spec))
        for name, spec in _named(model_id, "identity_columns", identity_columns).items()
    }
    generated = {
        name.lower(): (name, *_expression(model_id, name, spec))
        for name, spec in _named(model_id, "generated_columns", generated_columns).items()
    }
    if both := sorted(set(identities) & set(generated)):
        raise GeneratedColumnsError(
            f"Model {model_id}: {', '.join(both)} cannot be both an identity and a generated "
            f"column."
        )
    selected = {name.lower(): (name, data_type) for name, data_type in select_columns}
    contract = {name.lower(): data_type for name, data_type in (contract_columns or {}).items()}

    columns: dict[str, Column] = {}
    for key, (name, identity) in identities.items():
        if key in selected and identity.always:
            raise GeneratedColumnsError(
                f"Model {model_id}: identity column {name} is GENERATED ALWAYS, so Delta gives its "
                f"values: leave it out of the model's SELECT (or set always: false to allow "
                f"explicit values)."
            )
        data_type = selected.get(key, (name, "bigint"))[1]
        if data_type.lower() not in ("bigint", "long"):
            raise GeneratedColumnsError(
                f"Model {model_id}: identity column {name} must be bigint, not {data_type}."
            )
        columns[key] = Column(name, "bigint", identity=identity, from_select=key in selected)
    for key, (name, data_type) in selected.items():
        if key not in columns:
            expression = generated[key][1] if key in generated else None
            columns[key] = Column(name, data_type, expression=expression)
    for key, (name, expression, data_type) in generated.items():
        if key in columns:
            continue
        data_type = data_type or contract.get(key)
        if not data_type:
            raise GeneratedColumnsError(
                f"Model {model_id}: generated column {name} is not in the model's SELECT, so its "
                f"type is unknown: give generated_columns.{name}.data_type (or declare the column "
                f"with a data_type in the model's contract)."
            )
        columns[key] = Column(name, data_type, expression=expression, from_select=False)

    if not contract:
        return list(columns.values())
    if missing := [name for name in contract if name not in columns]:
        raise GeneratedColumnsError(
            f"Model {model_id}: the contract declares {', '.join(missing)}, which neither the "
            f"SELECT nor identity_columns / generated_columns give."
        )
    if extra := [column.name for key, column in columns.items() if key not in contract]:
        raise GeneratedColumnsError(
            f"Model {model_id}: {', '.join(extra)} not declared in the model's contract."
        )
    return [columns[name] for name in contract]


def _quoted(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


def column_definitions(columns: Sequence[Column]) -> str:
    """The column list of the table's CREATE TABLE, with identity and generation clauses."""
    definitions = []
    for column in columns:
        definition = f"{_quoted(column.name)} {column.data_type}"
        if column.identity is not None:
            kind = "ALWAYS" if column.identity.always else "BY DEFAULT"
            definition += (
                f" GENERATED {kind} AS IDENTITY"
                f" (START WITH {column.identity.start} INCREMENT BY {column.identity.step})"
            )
        elif column.expression is not None:
            definition += f" GENERATED ALWAYS AS ({column.expression})"
        definitions.append(definition)
    return ",\n  ".join(definitions)


def explain_refusal(model_id: str, error: str) -> str | None:
    """A Spark error of the DDL that means its Delta is older than 4.4, as one sentence."""
    if "UNSUPPORTED_FEATURE.TABLE_OPERATION" not in error:
        return None
    return (
        f"Model {model_id}: identity_columns / generated_columns need Delta 4.4 or newer on the "
        f"Spark that runs the model (older releases refuse them in SQL DDL): upgrade Delta "
        f"(delta-spark 4.4 with pyspark 4.0-4.2), or compute the column in the model's SQL."
    )
