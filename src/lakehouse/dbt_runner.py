"""dbt invoked in this process, so it shares the SparkSession (one JVM) already started.

The `lakehouse` CLI, the benchmarks and the tests all run dbt through `DbtRunner`: the
project's profile, optional throw-away schemas and their own target/log directories.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from dbt.cli.main import dbtRunner, dbtRunnerResult

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


def failures(result: dbtRunnerResult) -> str:
    """What failed in an invocation: its exception, or each failed node with its message."""
    if result.exception is not None:
        return str(result.exception)
    failed = [
        f"{r.node.unique_id}: {r.status} {r.message}"
        for r in (result.result or [])
        if getattr(r, "status", None) not in ("success", "pass")
    ]
    return "; ".join(failed) or "no node failed (see dbt's log)"


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
            raise DbtFailed(f"dbt {' '.join(args)} failed: {failures(result)}")
        return result
