"""What a user of `make run` sees: one short error when the Delta jars are missing (never a Java
stack trace), a copied home refused, and a new home's first command quiet (no JVM log line; a
first `lakehouse run`'s whole output: test_multihost's client)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from contextlib import closing
from pathlib import Path

import pytest

from dbt.adapters.sparkdelta.session import (
    SPARK_IVY_DIR,
    check_embedded_metastore_free,
    delta_coordinates,
    ivy_jar_name,
    one_resolution_at_a_time,
)
from python_tests.conftest import PROJECT_DIR
from python_tests.integration.conftest import jvm_log_lines

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

# An air-gapped machine's settings (docs/configuration.md): one resolver, a copy of a connected
# machine's Ivy cache, whose descriptors hold the versions Spark's resolution chose.
MIRROR_IVY_SETTINGS = """<ivysettings>
  <settings defaultResolver="mirror"/>
  <resolvers>
    <filesystem name="mirror">
      <ivy pattern="{root}/[organisation]/[module]/ivy-[revision].xml"/>
      <artifact
        pattern="{root}/[organisation]/[module]/[type]s/[artifact]-[revision](-[classifier]).[ext]"/>
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


@pytest.mark.distribution  # make test-dist: the air-gapped way of docs/configuration.md
def test_a_copied_ivy_cache_alone_serves_the_delta_jars(tmp_path):
    # The connected machine: this one, whose suite resolved the jars into its Ivy cache.
    connected = Path.home() / SPARK_IVY_DIR / "cache"
    repository = tmp_path / "repository"
    # Copied while no JVM starts (make test-dist's other process resolves into the same cache).
    with closing(one_resolution_at_a_time()):
        shutil.copytree(connected, repository)
    settings = tmp_path / "ivysettings.xml"
    settings.write_text(MIRROR_IVY_SETTINGS.format(root=repository))
    ivy = tmp_path / "ivy"
    env = {
        **os.environ,
        "LAKEHOUSE_HOME": str(tmp_path / "home"),
        "LAKEHOUSE_IVY_SETTINGS": str(settings),
        "LAKEHOUSE_IVY_CACHE": str(ivy),
        "LAKEHOUSE_SCHEMA": "air_gapped",
    }
    loaded = _run([sys.executable, "-m", "lakehouse.cli", "--orders", "20", "load"], env)
    assert loaded.returncode == 0, loaded.stderr
    assert (ivy / "jars" / ivy_jar_name(delta_coordinates()[0])).exists()
    assert (tmp_path / "home" / "warehouse" / "bronze.db" / "orders" / "_delta_log").is_dir()


@pytest.mark.distribution  # make test-dist: a new user's copied home
def test_a_copied_home_is_refused_and_the_original_left_alone(delta_spark, tmp_path):
    """`cp -a` of a built home keeps the metastore's absolute table locations: a session on the
    copy must refuse to start (the CLI and dbt alike), naming both places, and write nothing."""
    original, copy = tmp_path / "home", tmp_path / "copy"
    env = {**os.environ, "LAKEHOUSE_HOME": str(original), "LAKEHOUSE_SCHEMA": "copied_home"}
    load = [sys.executable, "-m", "lakehouse.cli", "--orders", "20", "load"]
    built = _run([*load, "--through", "0"], env)
    assert built.returncode == 0, built.stderr
    assert jvm_log_lines(built) == []  # a new user's first command, in a new home: quiet
    orders_log = original / "warehouse" / "bronze.db" / "orders" / "_delta_log"
    commits = sorted(orders_log.glob("*.json"))
    assert commits
    # The command's JVM may still be shutting down (deleting its scratch files under the home)
    # after the command returned: copy once it has ended, as its metastore lock says.
    check_embedded_metastore_free(original / "metastore_db", grace_seconds=60)
    subprocess.run(["cp", "-a", str(original), str(copy)], check=True)

    env["LAKEHOUSE_HOME"] = str(copy)
    refused = _run([*load, "--through", "1"], env)
    assert refused.returncode == 2
    [message] = [line for line in refused.stderr.splitlines() if line.startswith("error:")]
    assert str(original / "warehouse") in message and str(copy / "warehouse") in message
    dbt = _run([sys.executable, "-m", "dbt.cli.main", "run", "-s", "stg_shop__orders"], env)
    assert dbt.returncode != 0
    assert str(original / "warehouse") in dbt.stdout and "copied or moved" in dbt.stdout
    assert sorted(orders_log.glob("*.json")) == commits  # the original's tables: untouched
    assert not (copy / "warehouse" / "copied_home.db").exists()
