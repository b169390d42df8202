"""Run a command against the project's endpoint, once per remote target of the adapter's suite.

    python -m python_tests.with_endpoint thrift connect -- pytest dbt-sparkdelta/tests/functional

The endpoint (`lakehouse endpoint start`: a Spark Thrift server and Spark Connect with Delta)
starts once, in a home and on ports of its own, with a Connect token, and stops when the
commands end, however they end. Each command runs with SPARKDELTA_TEST_TARGET set to its target
and the endpoint's address and token in the variables the adapter's functional tests read
(dbt-sparkdelta/tests/functional/conftest.py). The exit status is the first failure's, else 0.
"""

from __future__ import annotations

import os
import secrets
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from python_tests.conftest import endpoint_env, running_test_endpoint

TARGETS = ("thrift", "connect")
USAGE = "python -m python_tests.with_endpoint {thrift,connect}... -- COMMAND..."


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    split = argv.index("--") if "--" in argv else len(argv)
    targets, command = argv[:split], argv[split + 1 :]
    if not targets or set(targets) - set(TARGETS) or not command:
        print(f"usage: {USAGE}", file=sys.stderr)
        return 2
    token = secrets.token_urlsafe(24)
    with tempfile.TemporaryDirectory(prefix="sparkdelta-suite-endpoint-") as home:
        env = endpoint_env(None, connect_token=token, home=Path(home))
        try:
            with running_test_endpoint(env) as endpoint:
                suite_env = {
                    **os.environ,
                    "SPARKDELTA_TEST_THRIFT_HOST": endpoint.client_host,
                    "SPARKDELTA_TEST_THRIFT_PORT": str(endpoint.thrift_port),
                    "SPARKDELTA_TEST_CONNECT_URL": endpoint.connect_url,
                    "SPARKDELTA_TEST_CONNECT_TOKEN": token,
                }
                for target in targets:
                    print(f"\n{' '.join(command)}: on the {target} target", flush=True)
                    target_env = {**suite_env, "SPARKDELTA_TEST_TARGET": target}
                    status = subprocess.run(command, env=target_env).returncode
                    if status:
                        return status
        except pytest.skip.Exception as exc:  # the Delta jars cannot be resolved here
            print(f"the endpoint cannot start: {exc.msg}", file=sys.stderr)
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
