"""The repository's skip policy (conftest.py at its root): a run-time skip fails the run."""

import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).parents[2]


def run_pytest(tmp_path: Path, tests: str) -> subprocess.CompletedProcess:
    (tmp_path / "test_sample.py").write_text(textwrap.dedent(tests))
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "conftest", "-p", "no:randomly", "-p",
         "no:cacheprovider", str(tmp_path / "test_sample.py")],
        cwd=ROOT, capture_output=True, text=True, env={"PYTHONPATH": str(ROOT)},
    )  # fmt: skip


def test_a_skip_at_run_time_fails_the_run_and_is_named(tmp_path):
    ran = run_pytest(
        tmp_path,
        """
        import pytest

        @pytest.fixture
        def slapd():
            pytest.skip("needs slapd")

        def test_ldap(slapd):
            pass

        def test_passes():
            pass
        """,
    )
    assert ran.returncode == 1, ran.stdout
    assert "1 tests skipped at run time" in ran.stdout
    assert "test_sample.py::test_ldap: Skipped: needs slapd" in ran.stdout


def test_a_skip_marker_chosen_on_purpose_passes(tmp_path):
    ran = run_pytest(
        tmp_path,
        """
        import pytest

        @pytest.mark.skip(reason="inapplicable to Spark")
        def test_grants():
            pass

        @pytest.mark.skipif(True, reason="not on this target")
        def test_other():
            pass
        """,
    )
    assert ran.returncode == 0, ran.stdout
    assert "2 skipped" in ran.stdout and "skipped at run time" not in ran.stdout
