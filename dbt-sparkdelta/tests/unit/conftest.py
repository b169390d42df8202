"""Render the adapter's macros without dbt's runtime, a database or a JVM.

Every `{% macro %}` under dbt/include/sparkdelta/macros/ is compiled on its own, as dbt does
(dbt-common's block extractor and Jinja environment), and called through a wrapper that turns
dbt's `return(...)` into the macro's value. Macros find each other, and the names dbt gives
them (`config`, `model`, `this`, `adapter`, `exceptions`, `modules`, ...), in one context that a
test fills in: `macros.config.update(...)`, `macros.model[...]`, `macros.adapter.columns[...]`.
Nothing of the project is imported: the adapter tests itself from its own folder. What the
adapter decides in Python for a macro (`adapter.delta_table_changes`), the fake adapter
delegates to the adapter's own function, so the SQL a macro renders from it is checked too.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from dbt_common.clients.jinja import extract_toplevel_blocks, get_environment

from dbt.adapters.sparkdelta.relation_configs import delta_table_changes

MACROS_DIR = Path(__file__).resolve().parents[2] / "dbt" / "include" / "sparkdelta" / "macros"


class CompilerError(Exception):
    """What `exceptions.raise_compiler_error` raises here."""


class MacroReturn(Exception):
    """dbt's `return(value)`: ends the macro, which then evaluates to `value`."""

    def __init__(self, value: Any) -> None:
        super().__init__()
        self.value = value


class Relation:
    """What the macros use of a dbt relation: its rendering, schema and identifier."""

    def __init__(self, schema: str, identifier: str) -> None:
        self.schema = schema
        self.identifier = identifier

    def __str__(self) -> str:
        return f"`{self.schema}`.`{self.identifier}`"


class Config:
    """The model's `config`: `config.get(...)` reads what the test set."""

    def __init__(self) -> None:
        self.values: dict[str, Any] = {}

    def get(self, key: str, default: Any = None) -> Any:
        return self.values.get(key, default)

    def require(self, key: str) -> Any:
        if key not in self.values:
            raise CompilerError(f"config {key} is required")
        return self.values[key]

    def update(self, **values: Any) -> None:
        self.values.update(values)

    def __call__(self, **values: Any) -> str:
        self.update(**values)
        return ""


class FakeAdapter:
    """The adapter methods the pure macros may call; `columns` per rendered relation."""

    def __init__(self) -> None:
        self.columns: dict[str, list[tuple[str, str]]] = {}
        self.method = "session"

    def type(self) -> str:
        return "sparkdelta"

    def connection_method(self) -> str:
        return self.method

    delta_table_changes = staticmethod(delta_table_changes)

    def get_columns_in_relation(self, relation: Any) -> list[SimpleNamespace]:
        return [
            SimpleNamespace(name=name, dtype=dtype)
            for name, dtype in self.columns.get(str(relation), [])
        ]


class Macros:
    """The adapter's macros, callable by name, over one shared dbt-like context."""

    error = CompilerError  # what a refused config or argument raises

    def __init__(self, directory: Path = MACROS_DIR) -> None:
        self.directory = directory
        self.config = Config()
        self.adapter = FakeAdapter()
        self.model: dict[str, Any] = {
            "unique_id": "model.shop.orders",
            "resource_type": "model",
            "name": "orders",
            "columns": {},
            "constraints": [],
        }
        self.warnings: list[str] = []
        self.logged: list[str] = []
        self.context: dict[str, Any] = {
            "config": self.config,
            "model": self.model,
            "this": Relation("analytics", "orders"),
            "adapter": self.adapter,
            "target": {"name": "test", "schema": "analytics", "type": "sparkdelta"},
            "execute": True,
            "exceptions": SimpleNamespace(
                raise_compiler_error=self._raise_compiler_error, warn=self.warnings.append
            ),
            "return": self._return,
            "log": self._log,
            "var": lambda name, default=None: default,
            "tojson": json.dumps,
            "fromjson": json.loads,
            "local_md5": lambda text: hashlib.md5(str(text).encode()).hexdigest(),
            "modules": SimpleNamespace(re=re, datetime=datetime),
        }
        self.templates: dict[str, Any] = {}
        environment = get_environment()
        for path in sorted(directory.rglob("*.sql")):
            blocks = extract_toplevel_blocks(
                path.read_text(),
                allowed_blocks={"macro", "materialization"},
                collect_raw_data=False,
            )
            for block in blocks:
                if block.block_type_name == "macro":
                    template = environment.from_string(block.full_block)
                    self.context[block.block_name] = self._callable(block.block_name, template)
                    self.templates[block.block_name] = template

    @staticmethod
    def _raise_compiler_error(message: str) -> None:
        raise CompilerError(message)

    @staticmethod
    def _return(value: Any) -> None:
        raise MacroReturn(value)

    def _log(self, message: str, info: bool = False) -> str:
        self.logged.append(message)
        return ""

    def _callable(self, name: str, template: Any) -> Callable[..., Any]:
        def call(*args: Any, **kwargs: Any) -> Any:
            try:
                return self._macro(name, template)(*args, **kwargs)
            except MacroReturn as returned:
                return returned.value

        call.__name__ = name
        return call

    def arguments(self, name: str) -> list[str]:
        """The names of macro `name`'s arguments, in order."""
        return list(self._macro(name, self.templates[name]).arguments)

    def _macro(self, name: str, template: Any) -> Any:
        # A fresh module per call, as dbt's MacroGenerator: it sees the context as it is now.
        return template.make_module(vars=self.context).__dict__[f"dbt_macro__{name}"]

    def sql(self, name: str, *args: Any, **kwargs: Any) -> str:
        """The text macro `name` returns, its whitespace squashed (see squash)."""
        return squash(self.context[name](*args, **kwargs))

    def __getattr__(self, name: str) -> Callable[..., Any]:
        try:
            return self.context[name]
        except KeyError:
            raise AttributeError(name) from None


def squash(sql: str) -> str:
    """SQL text with its runs of whitespace made single spaces, for readable assertions."""
    return re.sub(r"\s+", " ", str(sql)).strip()


@pytest.fixture
def macros() -> Macros:
    return Macros()


@pytest.fixture
def relation() -> Callable[[str, str], Relation]:
    return Relation
