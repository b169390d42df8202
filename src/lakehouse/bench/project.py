"""The project's dbt, invoked in-process (lakehouse.dbt_runner) on one scale's schemas: timed
invocations, the time dbt spent in the nodes, the SQL it ran."""

from __future__ import annotations

import json
import time
from pathlib import Path

from lakehouse.dbt_runner import DbtRunner


class Dbt:
    """dbt invoked in-process on the project, pointed at one scale's schemas."""

    def __init__(self, project_dir: Path, work_dir: Path, schema: str, bronze_schema: str):
        self.runner = DbtRunner(
            project_dir, project_dir, schema, bronze_schema, work_dir=work_dir, quiet=True
        )
        self.last_node_seconds = 0.0  # time dbt spent in the nodes of the last invocation

    @property
    def target_dir(self) -> Path:
        return self.runner.target_dir

    @property
    def schema(self) -> str:
        return self.runner.schema

    @property
    def bronze_schema(self) -> str:
        return self.runner.bronze_schema

    def __call__(self, *args: str, callbacks: list | None = None):
        result = self.runner.invoke(*args, callbacks=callbacks)
        self.last_node_seconds = sum(
            getattr(r, "execution_time", 0.0) or 0.0 for r in (result.result or [])
        )
        return result

    def timed(self, *args: str) -> float:
        start = time.perf_counter()
        self(*args)
        return time.perf_counter() - start

    def executed_sql(self) -> list[str]:
        """The SQL each model of the last invocation ran (target/run), in execution order."""
        results = json.loads((self.target_dir / "run_results.json").read_text())
        manifest = json.loads((self.target_dir / "manifest.json").read_text())
        statements = []
        for result in results["results"]:
            node = manifest["nodes"][result["unique_id"]]
            if node["resource_type"] != "model":
                continue
            path = self.target_dir / "run" / node["package_name"] / node["original_file_path"]
            statements.append(path.read_text())
        return statements
