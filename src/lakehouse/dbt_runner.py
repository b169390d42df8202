"""dbt invoked in this process, so it shares the SparkSession (one JVM) already started.

The `lakehouse` CLI, the benchmarks and the tests all run dbt through `DbtRunner`: the
project's profile, optional throw-away schemas and their own target/log directories.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from dbt.cli.main import dbtRunner, dbtRunnerResult

from lakehouse.dbt_errors import Failure, SourceFile, located_error, summary
from lakehouse.settings import PROJECT_DIR

# What a copy of the project needs to build (see `copy_project`).
PROJECT_FILES = (
    "dbt_project.yml",
    "profiles.yml",
    "packages.yml",
    "package-lock.yml",
    "models",
    "macros",
    "seeds",
    "snapshots",
    "tests",
)


def copy_project(destination: Path, project_dir: Path = PROJECT_DIR) -> Path:
    """A copy of the project's dbt files in `destination`, to edit without touching the
    repository (a scenario test, a benchmark); the operations package linked as `dbt deps`
    installs it."""
    destination.mkdir(parents=True, exist_ok=True)
    for name in PROJECT_FILES:
        source = project_dir / name
        if source.is_dir():
            shutil.copytree(source, destination / name)
        else:
            shutil.copy(source, destination / name)
    (destination / "dbt_packages").mkdir()
    (destination / "dbt_packages" / "delta_ops").symlink_to(project_dir / "delta_ops")
    return destination


class DbtFailed(RuntimeError):
    """A dbt invocation that did not succeed; the message names the failed nodes."""


@contextmanager
def environment(values: Mapping[str, str]) -> Iterator[None]:
    """Environment variables set inside the block and put back after it."""
    saved = {key: os.environ.get(key) for key in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def failures(result: dbtRunnerResult, manifest: Path | None = None) -> str:
    """What failed in an invocation, in the user's terms (`lakehouse.dbt_errors`): its own
    error, or each failed node with its message at the line of the model's file it maps back
    to (a unit test that ran into its model's error names the model), then the skipped nodes
    in one line. `manifest` (target/manifest.json) finds a unit test's model when the run did
    not include it."""
    if result.exception is not None:
        return located_error(str(result.exception))
    results = list(result.result or [])
    nodes = {r.node.unique_id: r.node for r in results if getattr(r, "node", None) is not None}

    @cache
    def manifest_nodes() -> Mapping:
        """The manifest's nodes, read once, and only when a unit test's model did not run."""
        if manifest is None or not manifest.is_file():
            return {}
        return json.loads(manifest.read_text()).get("nodes", {})

    failed, skipped = [], []
    for r in results:
        status, node = str(getattr(r, "status", "")), r.node
        if status in ("success", "pass"):
            continue
        if status == "skipped":
            skipped.append((str(node.resource_type), node.name))
            continue
        source = _source_of(node, nodes, manifest_nodes)
        path = getattr(node, "original_file_path", None)
        message = str(r.message or "")
        failed.append(Failure(str(node.resource_type), node.name, path, message, source, status))
    return summary(failed, skipped)


def _source_of(node, nodes: Mapping, manifest_nodes: Callable[[], Mapping]) -> SourceFile | None:
    """A model's own file (a unit test's: the model it tests), for locating its errors."""
    if str(node.resource_type) == "model":
        return SourceFile(node.original_file_path, node.raw_code or "", node.compiled_code)
    if str(node.resource_type) != "unit_test":
        return None
    tested = [n for n in node.depends_on.nodes if n.startswith("model.")]
    named = [n for n in tested if n.split(".")[2] == getattr(node, "model", None)]
    for unique_id in named or tested:
        if unique_id in nodes:
            found = nodes[unique_id]
            return SourceFile(found.original_file_path, found.raw_code or "")
        found = manifest_nodes().get(unique_id)
        if found:
            return SourceFile(found["original_file_path"], found.get("raw_code") or "")
    return None


@dataclass
class DbtRunner:
    """The project's dbt, in-process. `schema`/`bronze_schema` point it at other schemas
    (LAKEHOUSE_SCHEMA, LAKEHOUSE_BRONZE_SCHEMA); `work_dir` holds target/ and logs/;
    `target_path` puts dbt's artifacts elsewhere (a production build's state)."""

    project_dir: Path = PROJECT_DIR
    profiles_dir: Path = PROJECT_DIR
    schema: str | None = None
    bronze_schema: str | None = None
    work_dir: Path | None = None
    quiet: bool = False
    target_path: Path | None = None

    @property
    def target_dir(self) -> Path:
        return self.target_path or (self.work_dir or self.project_dir) / "target"

    def invoke(
        self, *args: str, expect_success: bool = True, callbacks: list | None = None
    ) -> dbtRunnerResult:
        """Run dbt with `args`; `callbacks` receive dbt's events (as dbtRunner's)."""
        options = ["--project-dir", str(self.project_dir), "--profiles-dir", str(self.profiles_dir)]
        if self.work_dir is not None or self.target_path is not None:
            options += ["--target-path", str(self.target_dir)]
        if self.work_dir is not None:
            options += ["--log-path", str(self.work_dir / "logs")]
        if self.quiet:
            options.append("--quiet")
        schemas = {"LAKEHOUSE_SCHEMA": self.schema, "LAKEHOUSE_BRONZE_SCHEMA": self.bronze_schema}
        with environment({key: value for key, value in schemas.items() if value}):
            result = dbtRunner(callbacks=callbacks or []).invoke([*args, *options])
        if expect_success and not result.success:
            manifest = self.target_dir / "manifest.json"
            raise DbtFailed(f"dbt {' '.join(args)} failed:\n{failures(result, manifest)}")
        return result
