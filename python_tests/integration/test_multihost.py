"""The project on a cluster across hosts: the master, two workers, an LDAP directory, a
PostgreSQL metastore, the endpoint (the cluster's driver) and a dbt client, each on its own test
host (a network namespace with its own address, python_tests/hosts.py), started with the
commands docs/deployment.md gives a team for real hosts.

Nothing shares a loopback: the workers join the master by its address, the executors reach the
driver at the endpoint's address and fetch the Delta jars from it, the endpoint listens on its
address with LDAP on Thrift and a token on Spark Connect, which a TLS proxy (nginx, with a
certificate of a CA made here) fronts because PySpark sends a token to another host only over
TLS. The endpoint's catalog is the metastore host's PostgreSQL. The client runs `lakehouse run`
on the `thrift` target with dbt's 4 threads (bronze over Connect, `dbt build`, a change batch,
`dbt build` again) while a reader on the client host, an embedded Spark on the same metastore,
counts the seeds by name the whole time; the tables must equal the independent recompute, and
the client's run, a new user's first `lakehouse run` in a new home, must be quiet. The hosts
share the file system, as real hosts share the warehouse's storage.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import shutil
import subprocess
import sys
import tempfile
import textwrap
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest
from deltalake import DeltaTable

from lakehouse import cluster, metastore
from python_tests import directory, hosts
from python_tests.conftest import PROJECT_DIR, seed_row_count
from python_tests.directory import PEOPLE, start_directory
from python_tests.integration.conftest import assert_delta_computes_the_shop_s_keys
from python_tests.integration.test_cluster import (
    BRONZE,
    DELTA_JAR,
    SCHEMA,
    assert_quiet_first_run,
    assert_tables_match_the_reference,
    table_path,
)
from python_tests.shop_reference import COLUMNS

pytestmark = pytest.mark.multihost

HOSTS = hosts.Hosts(
    prefix="lhmh",
    subnet="10.228.28",
    names=("master", "worker-1", "worker-2", "ldap", "endpoint", "client", "metastore"),
)
WORKERS = ("worker-1", "worker-2")
# Every host has its own ports: the defaults are free on all of them.
MASTER_PORT, MASTER_UI_PORT = 7077, 8080
THRIFT_PORT, CONNECT_PORT, CONNECT_TLS_PORT = 10000, 15002, 15443
METASTORE_PORT = metastore.DEFAULT_PORT
SEEDS = ("order_statuses", "country_codes")
LAKEHOUSE = [sys.executable, "-m", "lakehouse.cli", "--project-dir", str(PROJECT_DIR)]
NGINX = shutil.which("nginx") or "/usr/sbin/nginx"


def on_host(
    name: str, command: list, env: dict[str, str], timeout: float = 600
) -> subprocess.CompletedProcess:
    """Run `command` on test host `name` with `env` added; its outcome, or a failure that shows
    its output."""
    result = subprocess.run(
        HOSTS.exec(name, [str(part) for part in command]),
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    assert result.returncode == 0, (
        f"on {name}: {' '.join(map(str, command))} failed ({result.returncode}):\n"
        f"{result.stdout[-3000:]}\n{result.stderr[-3000:]}"
    )
    return result


@pytest.fixture(scope="module")
def test_hosts() -> Iterator[hosts.Hosts]:
    reason = hosts.available() or directory.missing()
    if reason is None and not os.path.exists(NGINX):
        reason = "needs a TLS proxy for Spark Connect: apt-get install nginx-light"
    if reason is None:
        try:
            metastore.server_binaries()
            metastore.check_driver(Path(metastore.DEFAULT_DRIVER))
        except metastore.MetastoreError as exc:
            reason = str(exc)
    if reason:
        pytest.skip(reason)
    HOSTS.create()  # removes what an earlier, killed run left first
    try:
        yield HOSTS
    finally:
        HOSTS.remove()  # ends every process still running on the hosts


@pytest.fixture(scope="module")
def ldap(test_hosts, tmp_path_factory) -> Iterator[directory.Directory]:
    url = f"ldap://{test_hosts.address('ldap')}:389"
    found = start_directory(
        tmp_path_factory.mktemp("ldap"), url, lambda command: test_hosts.exec("ldap", command)
    )
    yield found
    found.stop()


@pytest.fixture(scope="module")
def shared_metastore(test_hosts) -> Iterator[dict[str, str]]:
    """`lakehouse metastore start` on its host, listening on the host's address: the catalog
    of the endpoint and of the reader. Yields what its clients set."""
    # PostgreSQL runs as `postgres`, which pytest's private temporary directory shuts out.
    home = Path(tempfile.mkdtemp(prefix="lakehouse-multihost-metastore-"))
    home.chmod(0o755)
    address = test_hosts.address("metastore")
    password = secrets.token_urlsafe(16)
    env = {
        "LAKEHOUSE_HOME": str(home),
        "LAKEHOUSE_METASTORE_BIND_HOST": address,
        "LAKEHOUSE_METASTORE_PORT": str(METASTORE_PORT),
        "LAKEHOUSE_METASTORE_PASSWORD": password,
    }
    try:
        started = on_host("metastore", [*LAKEHOUSE, "metastore", "start"], env).stdout
        print("\nmetastore: " + started.splitlines()[0])
        # What the command tells its clients to export (the password it names by reference).
        exported = dict(
            line.removeprefix("export ").split("=", 1)
            for line in started.splitlines()
            if line.startswith("export ") and "PASSWORD" not in line
        )
        url = f"jdbc:postgresql://{address}:{METASTORE_PORT}/metastore"
        assert exported["LAKEHOUSE_METASTORE_URL"] == url, started
        yield {**exported, "LAKEHOUSE_METASTORE_PASSWORD": password}
    finally:
        subprocess.run(
            test_hosts.exec("metastore", [*LAKEHOUSE, "metastore", "stop"]),
            env={**os.environ, **env},
            check=False,
        )
        shutil.rmtree(home, ignore_errors=True)


@dataclass(frozen=True)
class ClusterHosts:
    master_url: str
    homes: dict[str, Path]  # LAKEHOUSE_HOME of each cluster host

    def env(self, name: str) -> dict[str, str]:
        """What `lakehouse cluster start` reads on host `name` (docs/deployment.md)."""
        env = {
            "LAKEHOUSE_HOME": str(self.homes[name]),
            "LAKEHOUSE_CLUSTER_HOST": HOSTS.address(name),
            "LAKEHOUSE_CLUSTER_PORT": str(MASTER_PORT),
            "LAKEHOUSE_CLUSTER_UI_PORT": str(MASTER_UI_PORT),
            "LAKEHOUSE_WORKER_MEMORY": "2g",
        }
        if name == "master":
            return {**env, "LAKEHOUSE_CLUSTER_WORKERS": "0", "LAKEHOUSE_CLUSTER_APP_CORES": "2"}
        return {
            **env,
            "LAKEHOUSE_CLUSTER_WORKERS": "1",
            "LAKEHOUSE_CLUSTER_MASTER": self.master_url,
        }

    def settings(self, name: str) -> cluster.ClusterSettings:
        from lakehouse.dbt_runner import environment

        with environment(self.env(name)):
            return cluster.ClusterSettings.from_env()


@pytest.fixture(scope="module")
def cluster_hosts(test_hosts, tmp_path_factory) -> Iterator[ClusterHosts]:
    """The master on its host, then one worker on each worker host, joining it by address."""
    hosts_ = ClusterHosts(
        master_url=f"spark://{test_hosts.address('master')}:{MASTER_PORT}",
        homes={name: tmp_path_factory.mktemp(name) for name in ("master", *WORKERS)},
    )
    started = []
    try:
        for name in ("master", *WORKERS):
            started.append(name)
            print(
                f"\n{name}: "
                + on_host(name, [*LAKEHOUSE, "cluster", "start"], hosts_.env(name)).stdout
            )
        yield hosts_
    finally:
        for name in reversed(started):
            subprocess.run(
                test_hosts.exec(name, [*LAKEHOUSE, "cluster", "stop"]),
                env={**os.environ, **hosts_.env(name)},
                check=False,
            )


@dataclass(frozen=True)
class Endpoint:
    env: dict[str, str]  # the endpoint host's
    client_env: dict[str, str]  # what a dbt client on another host sets
    home: Path


def make_certificates(where: Path, address: str) -> None:
    """A test CA, and a server certificate of it for `address` (gRPC checks the IP SAN)."""

    def openssl(*arguments: str) -> None:
        subprocess.run(["openssl", *arguments], check=True, capture_output=True, cwd=where)

    openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2",
            "-subj", "/CN=lakehouse test CA", "-keyout", "ca.key", "-out", "ca.pem")  # fmt: skip
    openssl("req", "-newkey", "rsa:2048", "-nodes", "-subj", f"/CN={address}",
            "-keyout", "server.key", "-out", "server.csr")  # fmt: skip
    (where / "san.ext").write_text(f"subjectAltName=IP:{address}\n")
    openssl("x509", "-req", "-in", "server.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-days",
            "2", "-CAcreateserial", "-extfile", "san.ext", "-out", "server.pem")  # fmt: skip


# The TLS proxy in front of Spark Connect (docs/deployment.md has the same server block).
NGINX_CONF = """\
daemon off;
worker_processes 1;
pid {home}/nginx.pid;
error_log {home}/error.log warn;
events {{ worker_connections 256; }}
http {{
    access_log off;
    server {{
        listen {address}:{tls_port} ssl http2;
        ssl_certificate {home}/server.pem;
        ssl_certificate_key {home}/server.key;
        client_max_body_size 0;  # bronze batches travel in the request
        location / {{
            grpc_pass grpc://127.0.0.1:{connect_port};
            grpc_read_timeout 1h;
            grpc_send_timeout 1h;
        }}
    }}
}}
"""


@pytest.fixture(scope="module")
def tls_proxy(test_hosts, tmp_path_factory) -> Iterator[Path]:
    """nginx on the endpoint's host: TLS on its address, plain gRPC to Connect on loopback.
    Yields the directory with the test CA's certificate (ca.pem)."""
    home = tmp_path_factory.mktemp("tls_proxy")
    address = test_hosts.address("endpoint")
    make_certificates(home, address)
    conf = NGINX_CONF.format(
        home=home, address=address, tls_port=CONNECT_TLS_PORT, connect_port=CONNECT_PORT
    )
    (home / "nginx.conf").write_text(conf)
    # -e: where nginx logs before it has read its configuration
    command = [NGINX, "-p", home, "-c", home / "nginx.conf", "-e", home / "error.log"]
    proxy = subprocess.Popen(
        test_hosts.exec("endpoint", list(map(str, command))),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.STDOUT,
    )
    try:
        deadline = time.monotonic() + 30
        while not (home / "nginx.pid").exists():
            assert proxy.poll() is None, f"nginx exited: {(home / 'error.log').read_text()}"
            assert time.monotonic() < deadline, "nginx did not start within 30s"
            time.sleep(0.2)
        yield home
    finally:
        proxy.terminate()
        proxy.wait(timeout=30)


@pytest.fixture(scope="module")
def endpoint(
    test_hosts, cluster_hosts, ldap, tls_proxy, shared_metastore, tmp_path_factory
) -> Iterator[Endpoint]:
    """`lakehouse endpoint start` on the endpoint's host as the cluster's driver, its catalog on
    the metastore host: Thrift on its address with LDAP, Connect on loopback with a token,
    behind the TLS proxy."""
    address = test_hosts.address("endpoint")
    token = secrets.token_urlsafe(24)
    home = tmp_path_factory.mktemp("endpoint")
    both = {  # what the endpoint and its clients set alike
        "LAKEHOUSE_THRIFT_AUTH": "LDAP",
        "LAKEHOUSE_THRIFT_USER": ldap.user,
        "LAKEHOUSE_THRIFT_PASSWORD": ldap.password,
        "LAKEHOUSE_CONNECT_TOKEN": token,
        "LAKEHOUSE_SCHEMA": SCHEMA,
        "LAKEHOUSE_BRONZE_SCHEMA": BRONZE,
    }
    env = {
        **both,
        **shared_metastore,
        "LAKEHOUSE_HOME": str(home),
        "LAKEHOUSE_BIND_HOST": address,
        "LAKEHOUSE_CONNECT_BIND_HOST": "127.0.0.1",
        "LAKEHOUSE_THRIFT_PORT": str(THRIFT_PORT),
        "LAKEHOUSE_SPARK_CONNECT_PORT": str(CONNECT_PORT),
        "LAKEHOUSE_LDAP_URL": ldap.url,
        "LAKEHOUSE_LDAP_BASE_DN": PEOPLE,
        "LAKEHOUSE_SPARK_MASTER": cluster_hosts.master_url,
        "LAKEHOUSE_DRIVER_HOST": address,
        "LAKEHOUSE_SPARK_CORES_MAX": "2",  # one executor on each worker
        "LAKEHOUSE_DRIVER_MEMORY": "1g",
    }
    client_env = {
        **both,
        "LAKEHOUSE_TARGET": "thrift",
        "LAKEHOUSE_THRIFT_HOST": address,
        "LAKEHOUSE_THRIFT_PORT": str(THRIFT_PORT),
        "LAKEHOUSE_SPARK_CONNECT_URL": f"sc://{address}:{CONNECT_TLS_PORT}",
        # gRPC's trusted roots: the CA that signed the proxy's certificate.
        "GRPC_DEFAULT_SSL_ROOTS_FILE_PATH": str(tls_proxy / "ca.pem"),
    }
    try:
        print("\nendpoint: " + on_host("endpoint", [*LAKEHOUSE, "endpoint", "start"], env).stdout)
        yield Endpoint(env, client_env, home)
    finally:
        subprocess.run(
            test_hosts.exec("endpoint", [*LAKEHOUSE, "endpoint", "stop"]),
            env={**os.environ, **env},
            check=False,
        )


def test_the_workers_join_the_master_by_address(cluster_hosts):
    status = cluster.master_status(cluster_hosts.settings("master"))
    assert status is not None and status["status"] == "ALIVE"
    workers = {w["host"]: w["state"] for w in status["workers"]}
    assert workers == {HOSTS.address(name): "ALIVE" for name in WORKERS}
    for name in WORKERS:
        healthy, line = cluster.status(cluster_hosts.settings(name))
        assert healthy, line
    print(f"  workers: {sorted(workers)} on {cluster_hosts.master_url}")


# A client on the client host: Thrift with a user and password, Connect with a token over TLS.
CLIENT_PROBE = textwrap.dedent(
    """\
    import os, sys
    from pyhive import hive
    from dbt.adapters.sparkdelta.spark_connect import open_session

    kind, credential = sys.argv[1], sys.argv[2] or None
    if kind == "thrift":
        connection = hive.connect(
            host=os.environ["LAKEHOUSE_THRIFT_HOST"],
            port=int(os.environ["LAKEHOUSE_THRIFT_PORT"]),
            username=os.environ["LAKEHOUSE_THRIFT_USER"],
            password=credential,
            auth="LDAP" if credential else "NONE",
        )
        cursor = connection.cursor()
        cursor.execute("select 40 + 2")
        print(cursor.fetchall()[0][0])
    else:
        url = os.environ["LAKEHOUSE_SPARK_CONNECT_URL"] if kind == "connect" else kind
        url += f"/;token={credential}" if credential else "/;use_ssl=true"
        session = open_session(url, retry_seconds=5)
        print(session.sql("select 40 + 2").collect()[0][0])
    """
)


# How each refusal shows in the client's error (so a refusal for another reason, such as a TLS
# failure, does not pass for the one tested).
LDAP_REFUSAL = "Error validating the login"
TOKEN_REFUSAL = "UNAUTHENTICATED"
UNREACHABLE = "RETRIES_EXCEEDED|UNAVAILABLE|Connection refused"


def probe(endpoint: Endpoint, kind: str, credential: str | None) -> subprocess.CompletedProcess:
    command = [sys.executable, "-c", CLIENT_PROBE, kind, credential or ""]
    return subprocess.run(
        HOSTS.exec("client", command),
        env={**os.environ, **endpoint.client_env},
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_other_hosts_reach_the_endpoint_only_with_credentials(endpoint):
    """From the client host: Thrift needs the LDAP password; Connect needs the token, over TLS
    through the proxy; the plain Connect port is not reachable at all."""
    password, token = (
        endpoint.env["LAKEHOUSE_THRIFT_PASSWORD"],
        endpoint.env["LAKEHOUSE_CONNECT_TOKEN"],
    )
    accepted = {
        "thrift": probe(endpoint, "thrift", password),
        "connect": probe(endpoint, "connect", token),
    }
    for kind, result in accepted.items():
        assert result.returncode == 0, f"{kind}: refused:\n{result.stderr[-2000:]}"
        assert result.stdout.split()[-1] == "42", f"{kind}: {result.stdout}"
    refused = {
        # what, the client's attempt, why it must fail
        "thrift without a password": (probe(endpoint, "thrift", None), LDAP_REFUSAL),
        "thrift with a wrong password": (probe(endpoint, "thrift", "wrong"), LDAP_REFUSAL),
        "connect without a token": (probe(endpoint, "connect", None), TOKEN_REFUSAL),
        "connect with a wrong token": (probe(endpoint, "connect", "wrong"), TOKEN_REFUSAL),
        "connect on its plain port": (
            probe(endpoint, f"sc://{HOSTS.address('endpoint')}:{CONNECT_PORT}", token),
            UNREACHABLE,
        ),
    }
    for what, (result, reason) in refused.items():
        assert result.returncode != 0, f"{what}: accepted, expected a refusal"
        found = re.search(reason, result.stderr)
        assert found, f"{what}: failed for another reason than {reason}:\n{result.stderr[-2000:]}"
        print(f"  {what}: refused ({found.group(0)})")
    print(f"  accepted: {sorted(accepted)}; refused: {sorted(refused)}")


# A reader on the client host: an embedded Spark on the shared metastore (the endpoint's
# catalog), counting the seeds by name until told to stop, then the tables named after that.
# One JSON line per read: {"table", "at", "rows"} or {"table", "at", "error"}.
SEED_READER = textwrap.dedent(
    """\
    import json, sys, time
    from pathlib import Path
    from dbt.adapters.sparkdelta.session import get_or_create_session
    from lakehouse.settings import session_settings

    schema, stop, out, seeds, tables = sys.argv[1], Path(sys.argv[2]), Path(sys.argv[3]), \\
        sys.argv[4].split(","), sys.argv[5].split(",")
    spark = get_or_create_session(session_settings())

    def read(table, log):
        try:
            found = {"rows": spark.table(f"{schema}.{table}").count()}
        except Exception as exc:  # recorded: the test tells an absent seed from a lost one
            found = {"error": str(exc).splitlines()[0][:300]}
        log.write(json.dumps({"table": table, "at": time.time(), **found}) + "\\n")
        log.flush()

    with out.open("w") as log:
        while not stop.exists():
            for seed in seeds:
                read(seed, log)
            time.sleep(1)
        for table in tables:
            read(table, log)
    """
)


@contextmanager
def seed_reader(endpoint: Endpoint, where: Path, tables: list[str]) -> Iterator[Path]:
    """SEED_READER running on the client host from when its Spark is up; yields the file of
    its reads, complete after the block."""
    where.mkdir()
    stop, reads = where / "stop", where / "reads.jsonl"
    env = {
        **{k: v for k, v in endpoint.env.items() if k.startswith("LAKEHOUSE_METASTORE_")},
        "LAKEHOUSE_HOME": str(where / "home"),
        "LAKEHOUSE_WAREHOUSE": str(endpoint.home / "warehouse"),  # the catalog's warehouse
        "LAKEHOUSE_SPARK_MASTER": "local[1]",
        "LAKEHOUSE_DRIVER_MEMORY": "1g",
        "LAKEHOUSE_SHUFFLE_PARTITIONS": "1",
    }
    arguments = [SCHEMA, stop, reads, ",".join(SEEDS), ",".join(tables)]
    command = [sys.executable, "-c", SEED_READER, *map(str, arguments)]
    reader = subprocess.Popen(
        HOSTS.exec("client", command),
        env={**os.environ, **env},
        stdout=subprocess.DEVNULL,
        stderr=open(where / "reader.log", "w"),  # noqa: SIM115 - the child's, closed with it
    )
    try:
        deadline = time.monotonic() + 300
        while not reads.exists():
            assert reader.poll() is None, (where / "reader.log").read_text()[-3000:]
            assert time.monotonic() < deadline, "the reader's Spark did not start within 300s"
            time.sleep(1)
        yield reads
        stop.touch()
        assert reader.wait(timeout=300) == 0, (where / "reader.log").read_text()[-3000:]
    finally:
        if reader.poll() is None:
            reader.kill()


def check_seed_reads(reads: Path, warehouse: Path) -> dict[str, int | str]:
    """Each seed, from the reader's first find of it, read by name at every poll with all its
    rows (never missing, never empty), before and after its last replacement. Returns what the
    reader found of the other tables it read (by name, through the shared catalog)."""
    lines = [json.loads(line) for line in reads.read_text().splitlines()]
    for seed in SEEDS:
        expected = seed_row_count(seed)
        polls = [line for line in lines if line["table"] == seed]
        first = next(n for n, line in enumerate(polls) if "rows" in line)
        seen = polls[first:]
        wrong = [line for line in seen if line.get("rows") != expected]
        assert not wrong, f"{seed}: read missing or with other rows than its CSV: {wrong[:3]}"
        replaced = DeltaTable(str(table_path(warehouse, SCHEMA, seed))).history(1)[0]
        before = [line for line in seen if line["at"] * 1000 < replaced["timestamp"]]
        after = [line for line in seen if line["at"] * 1000 > replaced["timestamp"]]
        assert before and after, f"{seed}: no read before or after its last replacement"
        print(f"  {seed}: read by name {len(seen)} times from the client host, {expected} rows")
    return {
        line["table"]: line.get("rows", line.get("error"))
        for line in lines
        if line["table"] not in SEEDS
    }


def executor_logs(cluster_hosts: ClusterHosts, name: str, app_id: str) -> list[str]:
    work = cluster_hosts.settings(name).directory
    return [
        log.read_text(errors="replace") for log in sorted(work.glob(f"worker-*/{app_id}/*/stderr"))
    ]


def test_the_client_builds_the_project_on_the_cluster_across_hosts(
    cluster_hosts, endpoint, delta_spark, tmp_path
):
    """`lakehouse run` on the client host (bronze over Connect through the TLS proxy, `dbt build`
    over Thrift with 4 threads, a change batch, `dbt build` again), while a reader on that host
    counts the seeds by name through the shared metastore; every worker host's executor ran
    tasks for the endpoint, reached its driver at the endpoint's address and fetched the Delta
    jars from it; the run's output is quiet; the tables equal the recompute and the reader's
    counts by name."""
    warehouse = endpoint.home / "warehouse"
    with seed_reader(endpoint, tmp_path / "reader", list(COLUMNS)) as reads:
        started = time.monotonic()
        client_run = on_host(
            "client",
            [*LAKEHOUSE, "run"],
            {
                **endpoint.client_env,
                "LAKEHOUSE_HOME": str(tmp_path / "client"),
                # The thrift target's 4 threads: Python models run at once over the shared
                # Connect session, as a team's builds do.
                "LAKEHOUSE_THREADS": "4",
            },
            timeout=2400,
        )
        print(f"  lakehouse run on the client host: {time.monotonic() - started:.0f}s")
    counted = check_seed_reads(reads, warehouse)

    status = cluster.master_status(cluster_hosts.settings("master"))
    (app,) = [a for a in status["activeapps"] if a["name"] == "lakehouse-endpoint"]
    driver = f"{HOSTS.address('endpoint')}:"
    for name in WORKERS:
        logs = executor_logs(cluster_hosts, name, app["id"])
        assert logs, f"{name}: no executor of {app['id']}"
        text = "\n".join(logs)
        assert f"CoarseGrainedScheduler@{driver}" in text, f"{name}: driver not reached by address"
        assert f"spark://{driver}" in text and DELTA_JAR in text, (
            f"{name}: the Delta jar was not fetched from the driver"
        )
        print(f"  {name}: {len(logs)} executor(s) ran {text.count('Running task')} tasks")
        assert "Running task" in text, f"{name}: no task ran"

    # A new user's first command, in a new home: quiet.
    assert_quiet_first_run(client_run, tmp_path / "client")
    rows = assert_tables_match_the_reference(delta_spark, warehouse)
    for name in COLUMNS:
        assert counted[name] == rows[name], f"{name}: the reader's count by name"
    assert_delta_computes_the_shop_s_keys(
        delta_spark, lambda name: f"delta.`{table_path(warehouse, SCHEMA, name)}`", rebuilt=True
    )
