"""Every public macro of the adapter is documented in _macros.yml, argument by argument (the
claim of docs/adapter.md). Private `_` helpers are described where they are defined; the
`sparkdelta__` implementations take the arguments of the dbt macro they implement. dbt 1.12
checks the same (validate_macro_args, on by default) and warns on every command, once per
argument whose name, place or type (its own type names) is off."""

from __future__ import annotations

import yaml
from dbt.parser.schemas import is_valid_type


def test_every_public_macro_is_documented_with_its_arguments_in_order(macros):
    documented = yaml.safe_load((macros.directory / "_macros.yml").read_text())["macros"]
    public = sorted(
        name
        for name in macros.templates
        if not name.startswith("_") and not name.startswith("sparkdelta__")
    )
    assert sorted(entry["name"] for entry in documented) == public
    for entry in documented:
        arguments = entry.get("arguments", [])
        assert [a["name"] for a in arguments] == macros.arguments(entry["name"]), entry["name"]
        for argument in arguments:
            assert argument.get("type") and argument.get("description"), (entry["name"], argument)
            assert is_valid_type(argument["type"]), (entry["name"], argument)
        assert entry.get("description"), entry["name"]
