"""The dbt docs site (`make test-docs`): `dbt docs generate` for the project, after a build so
that the catalog holds the tables' real columns and types, served on loopback and opened in
headless Chromium (Debian's, driven by playwright-core: `browse.mjs` beside this file).

fct_orders' page shows the description and the columns of its YAML, each with its description
and the type the table has; its lineage graph and the project's whole graph draw their nodes,
every model, seed, snapshot and source of the project among them. And from the manifest: every
model of the project is described, and so is every column its YAML lists, which are the
columns its table has. Screenshots of the page and of both graphs stay in the test's
temporary folder (their paths are printed; `make test-docs` puts it under /tmp)."""

from __future__ import annotations

import functools
import json
import re
import shutil
import subprocess
import threading
from collections.abc import Iterator
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
import yaml

from lakehouse.dbt_runner import DbtRunner
from lakehouse.shop.bronze import load_batches
from lakehouse.shop.generator import ShopGenerator
from python_tests.conftest import PROJECT_DIR, unique_schema

pytestmark = pytest.mark.docs_site

HERE = Path(__file__).parent
MODEL = "fct_orders"
MODEL_YAML = PROJECT_DIR / "models" / "marts" / "_marts__models.yml"
# What the graphs draw of the project (dbt docs leaves generic data tests out).
GRAPH_TYPES = ("model", "seed", "snapshot", "source")


def plain(text: str | None) -> str:
    """Text as a page shows it, whatever the markdown: no code or emphasis marks, one space."""
    return " ".join(re.sub(r"[`*_]", "", text or "").split())


@pytest.fixture(scope="module")
def site(delta_spark, tmp_path_factory) -> Path:
    """target/ of `dbt docs generate` after a build of the project (its data tests left out:
    the catalog needs the tables, not their tests) on a small first batch of bronze."""
    work = tmp_path_factory.mktemp("docs_site")
    schema, bronze = unique_schema("docs"), unique_schema("docs_bronze")
    load_batches(delta_spark, ShopGenerator(orders=50, seed=7), bronze, 0)
    dbt = DbtRunner(PROJECT_DIR, PROJECT_DIR, schema, bronze, work_dir=work, quiet=True)
    dbt.invoke("build", "--exclude-resource-type", "test", "unit_test")
    dbt.invoke("docs", "generate")
    return dbt.target_dir


@pytest.fixture(scope="module")
def manifest(site) -> dict:
    return json.loads((site / "manifest.json").read_text())


@pytest.fixture(scope="module")
def catalog(site) -> dict:
    return json.loads((site / "catalog.json").read_text())


@pytest.fixture(scope="module")
def served(site) -> Iterator[str]:
    """The site on 127.0.0.1 at a free port, from a thread of this process."""
    handler = functools.partial(QuietHandler, directory=str(site))
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


class QuietHandler(SimpleHTTPRequestHandler):
    def log_message(self, format, *args):  # noqa: A002 (the base class's name)
        pass


@pytest.fixture(scope="module")
def browsed(served, manifest, tmp_path_factory) -> dict:
    """What browse.mjs saw in Chromium: the model's page, its lineage graph, the whole graph."""
    node = shutil.which("node")
    assert node, "node is not on PATH (make test-docs needs Node.js 20)"
    assert (HERE / "node_modules" / "playwright-core").is_dir(), (
        f"playwright-core is not installed in {HERE}: run `make test-docs` (npm ci)"
    )
    shots = tmp_path_factory.mktemp("screenshots")
    model_id = f"model.{manifest['metadata']['project_name']}.{MODEL}"
    ran = subprocess.run(
        [node, str(HERE / "browse.mjs"), served, model_id, str(shots)],
        cwd=HERE, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert ran.returncode == 0, f"browse.mjs failed ({ran.returncode}):\n{ran.stderr}"
    (shots / "browse.json").write_text(ran.stdout)  # what it saw, beside the screenshots
    seen = json.loads(ran.stdout)
    for name, path in seen["screenshots"].items():
        print(f"screenshot {name}: {path}")
    print(f"what the browser saw: {shots / 'browse.json'}")
    assert "error" not in seen, seen.get("error")
    assert seen["page_errors"] == [], f"the page threw: {seen['page_errors']}"
    return seen


def project_nodes(manifest: dict) -> dict[str, dict]:
    """The project's own nodes and sources (not its packages'), by unique id."""
    project = manifest["metadata"]["project_name"]
    every = {**manifest["nodes"], **manifest["sources"]}
    return {uid: node for uid, node in every.items() if node["package_name"] == project}


def model_yaml(name: str) -> dict:
    [model] = [m for m in yaml.safe_load(MODEL_YAML.read_text())["models"] if m["name"] == name]
    return model


def test_every_model_and_its_columns_are_described(manifest, catalog):
    """Every model of the project has a description, every column of its YAML has one, and
    its YAML lists the columns its table has (the catalog, read from the built tables)."""
    models = {
        uid: node
        for uid, node in project_nodes(manifest).items()
        if node["resource_type"] == "model"
    }
    assert models
    undescribed = sorted(node["name"] for node in models.values() if not plain(node["description"]))
    assert undescribed == [], f"models without a description: {undescribed}"
    columns = {
        node["name"]: [
            c for c, column in node["columns"].items() if not plain(column["description"])
        ]
        for node in models.values()
    }
    undescribed = {model: names for model, names in columns.items() if names}
    assert undescribed == {}, f"columns without a description: {undescribed}"
    differ = {
        node["name"]: {
            "in the table, not in the YAML": sorted(set(table) - set(node["columns"])),
            "in the YAML, not in the table": sorted(set(node["columns"]) - set(table)),
        }
        for uid, node in models.items()
        if set(table := catalog["nodes"][uid]["columns"]) != set(node["columns"])
    }
    assert differ == {}, f"YAML columns that are not the table's: {differ}"


def test_the_models_page_shows_its_description_and_columns(browsed, manifest, catalog):
    """fct_orders' page: the description of its YAML, then its columns in the table's order,
    each with its YAML description and the type of the built table."""
    expected = model_yaml(MODEL)
    page = browsed["model"]
    assert page["title"].split()[0] == MODEL
    assert plain(page["description"]) == plain(expected["description"])
    model_id = f"model.{manifest['metadata']['project_name']}.{MODEL}"
    table = sorted(catalog["nodes"][model_id]["columns"].values(), key=lambda c: c["index"])
    shown = [(c["name"], c["type"], plain(c["description"])) for c in page["columns"]]
    described = {c["name"]: plain(c.get("description")) for c in expected["columns"]}
    assert [name for name, _, _ in shown] == [c["name"] for c in table]
    assert {name for name, _, _ in shown} == set(described)
    assert shown == [(c["name"], c["type"], described[c["name"]]) for c in table]


def test_the_models_lineage_graph_draws_its_parents_and_children(browsed, manifest):
    """The page's lineage graph (one hop each way): the model, each of its parents and
    children of GRAPH_TYPES, nothing else, drawn inside the graph's area."""
    model_id = f"model.{manifest['metadata']['project_name']}.{MODEL}"
    graph = browsed["lineage"]
    assert graph and graph["painted_pixels"] > 0, f"nothing drawn: {graph}"
    neighbours = {model_id, *manifest["parent_map"][model_id], *manifest["child_map"][model_id]}
    every = {**manifest["nodes"], **manifest["sources"], **manifest.get("unit_tests", {})}
    must = {uid for uid in neighbours if every[uid]["resource_type"] in GRAPH_TYPES}
    visible = set(graph["visible"])
    assert must <= visible, f"not drawn: {sorted(must - visible)}"
    assert visible <= neighbours, f"drawn but not a neighbour: {sorted(visible - neighbours)}"
    assert graph["inside"] == len(visible)


def test_the_projects_graph_draws_every_model(browsed, manifest):
    """The overview's lineage graph: every model, seed, snapshot and source of the project."""
    graph = browsed["project_graph"]
    assert graph and graph["painted_pixels"] > 0, f"nothing drawn: {graph}"
    expected = {
        uid for uid, node in project_nodes(manifest).items() if node["resource_type"] in GRAPH_TYPES
    }
    assert {uid for uid in expected if uid.startswith("model.")}, "the manifest has no model"
    visible = set(graph["visible"])
    assert expected <= visible, f"not drawn: {sorted(expected - visible)}"
    assert graph["inside"] == len(visible)
