"""The project's embedded Spark session settings, read from the `local` output of profiles.yml.

dbt starts the session from that output (through the sparkdelta adapter); the `lakehouse` CLI,
the tests and the benchmarks start the same session before dbt runs, so they render the same
output here. Only `env_var` is rendered, as dbt does: the profile's one mapping from
environment variables (LAKEHOUSE_HOME, LAKEHOUSE_SHUFFLE_PARTITIONS, ...) to settings.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import jinja2
import yaml

from dbt.adapters.sparkdelta.session import SessionSettings

PROFILE = "lakehouse"
PROJECT_DIR = Path(__file__).resolve().parents[2]


def _env_var(name: str, default: str | None = None) -> str:
    value = os.environ.get(name, default)
    if value is None:
        raise KeyError(f"profiles.yml: environment variable {name} is not set")
    return value


def _render(value: Any) -> Any:
    if isinstance(value, dict):
        return {key: _render(item) for key, item in value.items()}
    if isinstance(value, str) and "{{" in value:
        template = jinja2.Environment().from_string(value)
        return template.render(env_var=_env_var)
    return value


def profile_output(target: str = "local", project_dir: Path = PROJECT_DIR) -> dict[str, Any]:
    """One output of the project's profile, its env_var() calls rendered."""
    profiles = yaml.safe_load((project_dir / "profiles.yml").read_text())
    return _render(profiles[PROFILE]["outputs"][target])


def session_settings(project_dir: Path = PROJECT_DIR) -> SessionSettings:
    """The settings dbt's `local` target starts its Spark session with."""
    return SessionSettings.from_profile(profile_output("local", project_dir), project_dir)


def home(project_dir: Path = PROJECT_DIR) -> Path:
    """LAKEHOUSE_HOME: the metastore, warehouse, logs and the endpoint's state."""
    return session_settings(project_dir).home


def prod_state_dir(project_dir: Path = PROJECT_DIR) -> Path:
    """LAKEHOUSE_PROD_STATE: where every production build leaves its dbt artifacts (its
    `--target-path`), so an analyst's `--state`/`--defer` finds production's manifest.json.
    Default: `prod-state/` in LAKEHOUSE_HOME, beside the warehouse it describes."""
    configured = os.environ.get("LAKEHOUSE_PROD_STATE")
    if configured:
        return Path(configured).expanduser().resolve()
    return home(project_dir) / "prod-state"
