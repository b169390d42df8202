"""delta_ops' macros call the package's own macros as `delta_ops.<name>`: a package macro called
from another project's macro, hook or model runs in that project's context, where an unprefixed
package name is undefined (`'_select_delta_tables' is undefined`). Read from the Jinja syntax
tree of every macro file (strings and comments are not calls), no dbt and no Spark. And the
macros' YAML says what dbt 1.12 checks at every parse (validate_macro_args, on by default: a
warning per mismatch on every command of every project that installs the package)."""

from __future__ import annotations

import re

import jinja2
import yaml
from dbt.parser.schemas import is_valid_type
from jinja2 import nodes

from python_tests.conftest import PROJECT_DIR

MACROS = PROJECT_DIR / "delta_ops" / "macros"
FILES = sorted(MACROS.rglob("*.sql"))


def macro_names() -> set[str]:
    return {
        name
        for path in FILES
        for name in re.findall(r"\{%-?\s*macro\s+(\w+)\s*\(", path.read_text())
    }


def unprefixed_uses(path, names: set[str]) -> list[str]:
    """Calls of a package macro by its bare name, and private macros passed by bare name."""
    tree = jinja2.Environment(extensions=["jinja2.ext.do"]).parse(path.read_text())
    found = []
    for call in tree.find_all(nodes.Call):
        if isinstance(call.node, nodes.Name) and call.node.name in names:
            found.append(f"{path.relative_to(MACROS)}:{call.lineno} {call.node.name}(...)")
    for name in tree.find_all(nodes.Name):
        if name.ctx == "load" and name.name.startswith("_") and name.name in names:
            found.append(f"{path.relative_to(MACROS)}:{name.lineno} {name.name}")
    return found


def test_the_package_has_macros():
    assert len(FILES) > 30 and {"vacuum", "_select_delta_tables"} <= macro_names()


def test_every_own_macro_is_called_with_the_package_prefix():
    names = macro_names()
    found = [use for path in FILES for use in unprefixed_uses(path, names)]
    assert not found, "call these as delta_ops.<name>:\n" + "\n".join(sorted(set(found)))


def macro_arguments() -> dict[str, list[str]]:
    environment = jinja2.Environment(extensions=["jinja2.ext.do"])
    return {
        macro.name: [argument.name for argument in macro.args]
        for path in FILES
        for macro in environment.parse(path.read_text()).find_all(nodes.Macro)
    }


def test_every_documented_macro_has_its_arguments_in_order_with_dbt_s_type_names():
    defined = macro_arguments()
    wrong = []
    for path in sorted(MACROS.rglob("*.yml")):
        for entry in yaml.safe_load(path.read_text()).get("macros", []):
            documented = entry.get("arguments", [])
            if [argument["name"] for argument in documented] != defined[entry["name"]]:
                wrong.append(f"{entry['name']}: arguments {defined[entry['name']]}")
            wrong.extend(
                f"{entry['name']}.{argument['name']}: type {argument['type']!r}"
                for argument in documented
                if argument.get("type") and not is_valid_type(argument["type"])
            )
    assert not wrong, "fix the macros' YAML:\n" + "\n".join(wrong)
