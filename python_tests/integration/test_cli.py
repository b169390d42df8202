"""What a user of `make run` sees: quiet output, and one short error when the Delta jars are
missing (never a Java stack trace)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from dbt.adapters.sparkdelta.session import delta_coordinates
from python_tests.conftest import PROJECT_DIR

EMPTY_IVY_SETTINGS = """<ivysettings>
  <settings defaultResolver="nowhere"/>
  <resolvers>
    <filesystem name="nowhere">
      <ivy pattern="{root}/[organisation]/[module]/[revision]/ivy.xml"/>
      <artifact pattern="{root}/[organisation]/[module]/[revision]/[artifact].[ext]"/>
    </filesystem>
  </resolvers>
</ivysettings>
"""


@pytest.fixture
def unresolvable_env(tmp_path: Path) -> dict[str, str]:
    settings = tmp_path / "ivysettings.xml"
    settings.write_text(EMPTY_IVY_SETTINGS.format(root=tmp_path / "empty-repo"))
    return {
        **os.environ,
        "LAKEHOUSE_HOME": str(tmp_path / "home"),
        "LAKEHOUSE_IVY_SETTINGS": str(settings),
        "LAKEHOUSE_IVY_CACHE": str(tmp_path / "ivy"),
        "LAKEHOUSE_SCHEMA": "launch_error_test",
    }


def _run(args: list[str], env: dict[str, str], timeout: int = 300) -> subprocess.CompletedProcess:
    return subprocess.run(
        args, cwd=PROJECT_DIR, env=env, capture_output=True, text=True, timeout=timeout
    )


def test_lakehouse_run_explains_missing_jars_in_one_line(unresolvable_env):
    result = _run([sys.executable, "-m", "lakehouse.cli", "run"], unresolvable_env)
    assert result.returncode != 0
    errors = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(errors) == 1, result.stderr
    for coordinate in delta_coordinates():
        assert coordinate in errors[0]
    assert "LAKEHOUSE_MAVEN_REPOSITORIES" in errors[0]
    assert "Exception" not in result.stdout + result.stderr


def test_dbt_build_explains_missing_jars(unresolvable_env):
    dbt = str(Path(sys.executable).with_name("dbt"))
    result = _run([dbt, "build", "--no-partial-parse"], unresolvable_env)
    assert result.returncode != 0
    assert delta_coordinates()[0] in result.stdout
    assert "at org.apache.spark" not in result.stdout + result.stderr


def test_lakehouse_run_output_is_quiet(delta_spark, tmp_path):
    env = {
        **os.environ,
        "LAKEHOUSE_HOME": str(tmp_path / "home"),
        "LAKEHOUSE_SCHEMA": "quiet_run",
        "LAKEHOUSE_BRONZE_SCHEMA": "quiet_bronze",
    }
    # Two full builds (the initial load and the first change batch) in a second JVM.
    result = _run([sys.executable, "-m", "lakehouse.cli", "--orders", "100", "run"], env, 1800)
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    assert "Completed successfully" in result.stdout
    assert "Delta at work" in result.stdout
    jvm_noise = [
        line
        for line in output.splitlines()
        if any(marker in line for marker in (" WARN ", " INFO ", "[Stage ", "Ivy ", ":: "))
    ]
    assert jvm_noise == []
