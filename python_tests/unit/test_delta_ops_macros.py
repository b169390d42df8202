"""delta_ops' macros call the package's own macros as `delta_ops.<name>`: a package macro called
from another project's macro, hook or model runs in that project's context, where an unprefixed
package name is undefined (`'_select_delta_tables' is undefined`). Read from the Jinja syntax
tree of every macro file (strings and comments are not calls), no dbt and no Spark."""

from __future__ import annotations

import re

import jinja2
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
