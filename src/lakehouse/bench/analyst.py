"""`make bench-analyst`: the analyst's loop (docs/analyst.md) timed as the analyst types it, at
the project's default scale (`lakehouse run`'s 1,000 orders), and a diff of a 1M-row model
against the engine's floor for the same work (one full scan of both sides). Writes
docs/bench/analyst.md.

Every step is the `lakehouse` command in a process of its own, timed by the wall clock, in a
throw-away home (its own metastore, warehouse and endpoint) and a throw-away copy of the
project (the loop edits a model): production built by `lakehouse run`; the first `lakehouse
dev clone` starts the warm engine (the home's endpoint), every later step reuses it. Floors,
on the same engine in the same run: the same SHALLOW CLONE statements issued directly (4 at a
time, as dbt's threads), a process that only starts the CLI, one scan of both diffed tables.
Targets: a development schema of the whole project in <= 10 s, a slim build of one gold
model and its children in <= 15 s, a diff of a 1,000-row model in <= 5 s, of a 1M-row model
in <= 2x one scan of both sides.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from pathlib import Path

from lakehouse.bench.measure import log, machine_info, seconds_of
from lakehouse.dbt_runner import copy_project
from lakehouse.delta.audit import delta_tables
from lakehouse.dev import RESULT_PREFIX, footprint, human_bytes
from lakehouse.processes import free_port
from lakehouse.settings import PROJECT_DIR

REPORT = PROJECT_DIR / "docs" / "bench" / "analyst.md"
ORDERS = 1000  # `lakehouse run`'s default scale
DIFF_ROWS = 1_000_000
REPEATS = 3
PROD, DEV = "bench_prod", "bench_dev"
EDIT = (
    "order_statuses.is_final as is_status_final,",
    "case when orders.status = 'shipped' then true else order_statuses.is_final end"
    " as is_status_final,",
)
TARGETS = {  # step -> seconds aimed at
    "clone": 10.0,
    "build": 15.0,
    "diff": 5.0,
}


class Cli:
    """The `lakehouse` command run as the analyst runs it: a new process each time."""

    def __init__(self, project: Path, env: dict[str, str]):
        self.project, self.env = project, env

    def __call__(self, *args: str, env: dict[str, str] | None = None) -> float:
        """Seconds of wall clock; a failed command stops the benchmark with its output."""
        command = [sys.executable, "-m", "lakehouse.cli", "--project-dir", str(self.project)]
        started = time.perf_counter()
        done = subprocess.run(
            [*command, *args], env={**self.env, **(env or {})}, capture_output=True, text=True
        )
        seconds = time.perf_counter() - started
        if done.returncode != 0:
            raise RuntimeError(f"lakehouse {' '.join(args)}: exit {done.returncode}\n"
                               f"{done.stdout}\n{done.stderr}")  # fmt: skip
        return seconds

    def median(self, *args: str, before: tuple[str, ...] | None = None) -> float:
        """The median of REPEATS runs; `before` runs untimed ahead of each (a drop before a
        clone)."""
        runs = []
        for _ in range(REPEATS):
            if before:
                self(*before)
            runs.append(self(*args))
        return statistics.median(runs)


def loop_steps(cli: Cli, connect) -> dict:
    """Production by `lakehouse run`, then each step of the loop; returns seconds per step,
    the floors, and what the development schema's tables wrote."""
    steps: dict[str, float] = {}
    steps["production: lakehouse run (2 batches, embedded)"] = cli("run")
    steps["first use: lakehouse dev clone (starts the warm engine)"] = cli("dev", "clone")
    spark = connect()
    used = footprint(spark, DEV)
    drop = ("dev", "drop", "--yes")
    steps["lakehouse dev drop --yes"] = cli.median(*drop, before=("dev", "clone"))
    steps["lakehouse dev clone"] = cli.median("dev", "clone", before=drop)
    steps["floor: the same SHALLOW CLONEs, direct, 4 at a time"] = clone_floor(spark)
    edited = cli.project / "models" / "marts" / "fct_orders.sql"
    edited.write_text(edited.read_text().replace(*EDIT))
    steps["lakehouse dev build (after editing fct_orders)"] = cli.median("dev", "build")
    steps["lakehouse dev diff fct_orders"] = cli.median("dev", "diff", "fct_orders")
    steps["floor: a process that only starts the CLI (lakehouse --help)"] = cli.median("--help")
    return {
        "steps": steps,
        "tables": used.tables,
        "data_bytes": used.data_bytes,
        "log_bytes": used.log_bytes,
        "rows": spark.sql(f"select count(*) as n from {PROD}.fct_orders").collect()[0].n,
    }


def clone_floor(spark) -> float:
    """Production's Delta tables shallow-cloned by plain statements on the same engine."""
    schema = "bench_clone_floor"
    tables = list(delta_tables(spark, PROD))
    spark.sql(f"drop schema if exists {schema} cascade")
    spark.sql(f"create schema {schema}")

    def clone(table: str) -> None:
        spark.sql(f"create table {schema}.`{table}` shallow clone {PROD}.`{table}`").collect()

    with ThreadPoolExecutor(max_workers=4) as pool:
        seconds = seconds_of(lambda: list(pool.map(clone, tables)))
    spark.sql(f"drop schema {schema} cascade")
    return seconds


def diff_vs_floor(cli: Cli, spark) -> dict:
    """`lakehouse dev diff` of a 1M-row table (1% changed, 0.5% only on each side) against
    one full scan of both sides (a hash over every column, each side read once) and one bare
    full outer join of both on the key; the diff's own query time is the `seconds` of the
    result it logs."""
    a, b = "bench_diff_prod", "bench_diff_dev"
    for schema in (a, b):
        spark.sql(f"drop schema if exists {schema} cascade")
        spark.sql(f"create schema {schema}")
    spark.sql(
        f"create table {a}.big using delta as select id, id % 5000 as customer_id, "
        "cast(id % 997 * 1.25 as decimal(18, 2)) as amount, "
        "element_at(array('placed', 'paid', 'shipped'), cast(id % 3 + 1 as int)) as status, "
        "timestamp_seconds(1700000000 + id) as updated_at, "
        "if(id % 10 = 0, null, concat('note ', id)) as note "
        f"from range({DIFF_ROWS})"
    )
    spark.sql(
        f"create table {b}.big using delta as "
        "select id, customer_id, if(id % 100 = 7, amount + 1, amount) as amount, status, "
        f"updated_at, note from {a}.big where id % 200 != 3 "
        f"union all select id, 0, 0, 'placed', timestamp_seconds(0), null "
        f"from range({DIFF_ROWS}, {DIFF_ROWS + DIFF_ROWS // 200})"
    )
    schemas = {"LAKEHOUSE_SCHEMA": a, "LAKEHOUSE_DEV_SCHEMA": b}
    runs: dict[str, list[float]] = {"diff_s": [], "query_s": [], "floor_s": [], "join_s": []}
    scan = [f"select bit_xor(xxhash64(*)) from {side}.big" for side in (a, b)]
    # the least a keyed diff must do: match every row of one side with the other's by key
    join = (
        f"select count_if(a.id is null), count_if(b.id is null), "
        f"count_if(a.id = b.id and xxhash64(a.*) != xxhash64(b.*)) "
        f"from {a}.big as a full outer join {b}.big as b on a.id = b.id"
    )
    for _ in range(REPEATS):
        runs["floor_s"].append(seconds_of(lambda: [spark.sql(q).collect() for q in scan]))
        runs["join_s"].append(seconds_of(lambda: spark.sql(join).collect()))
        runs["diff_s"].append(cli("dev", "diff", "big", "--key", "id", env=schemas))
        runs["query_s"].append(_logged_diff_seconds(cli.project))
    for schema in (a, b):
        spark.sql(f"drop schema {schema} cascade")
    return {name: statistics.median(values) for name, values in runs.items()}


def _logged_diff_seconds(project: Path) -> float:
    """The `seconds` diff_relations reports for its queries, from dbt's log file."""
    lines = (project / "logs" / "dbt.log").read_text().splitlines()
    [*_, last] = [line for line in lines if RESULT_PREFIX in line]
    return json.loads(last.split(RESULT_PREFIX, 1)[1])["seconds"]


def render(results: dict) -> str:
    loop, diff = results["loop"], results["diff"]
    steps = loop["steps"]
    measured = {
        "clone": steps["lakehouse dev clone"],
        "build": steps["lakehouse dev build (after editing fct_orders)"],
        "diff": steps["lakehouse dev diff fct_orders"],
    }
    ratio = diff["diff_s"] / diff["floor_s"]
    query_ratio = diff["query_s"] / diff["floor_s"]
    lines = [
        "# The analyst's loop: measured",
        "",
        f"Written by `make bench-analyst` on {results['finished_at']} "
        f"({results['machine']}). Default scale: {ORDERS:,} orders (`lakehouse run`: "
        f"batches 0 and 1; fct_orders {loop['rows']:,} rows).",
        "",
        "Each step is the `lakehouse` command in a new process, timed by the wall clock "
        f"(median of {REPEATS} where repeated), as an analyst types it; the first `dev clone` "
        "starts the warm engine (the home's endpoint), every later step uses it.",
        "",
        "| step | seconds |",
        "|---|---:|",
        *(f"| {name} | {seconds:.1f} |" for name, seconds in steps.items()),
        "",
        f"The development schema's {loop['tables']} Delta tables wrote "
        f"{human_bytes(loop['data_bytes'])} of data files and "
        f"{human_bytes(loop['log_bytes'])} of Delta log.",
        "",
        f"Diff of two {DIFF_ROWS:,}-row tables (`lakehouse dev diff big --key id`, median of "
        f"{REPEATS}): {diff['diff_s']:.1f} s in all, of which the diff's queries (the join "
        f"with the counts, the key's uniqueness on each side, per-column breakdown and totals, "
        f"then the samples' join; timed by the operation itself) {diff['query_s']:.1f} s. "
        "One full scan of both sides (the floor): "
        f"{diff['floor_s']:.1f} s; ratio of the queries {query_ratio:.2f}, of the whole "
        f"command {ratio:.2f} (the rest is the process and dbt's start). The least a keyed "
        f"diff must do, one full outer join of both sides on the key counting the rows on "
        f"one side only and the differing ones: {diff['join_s']:.1f} s (the diff's queries "
        f"{diff['query_s'] / diff['join_s']:.2f}x of it).",
        "",
        "| target | measured | met |",
        "|---|---|---|",
        *(
            f"| {step} <= {TARGETS[step]:.0f} s | {measured[step]:.1f} s | "
            f"{met(measured[step] <= TARGETS[step])} |"
            for step in TARGETS
        ),
        f"| dev schema writes < 1 MiB of data files | {human_bytes(loop['data_bytes'])} | "
        f"{met(loop['data_bytes'] < 1024**2)} |",
        f"| diff of 1M rows <= 2x a full scan of both sides (its queries) | "
        f"{query_ratio:.2f}x | {met(query_ratio <= 2)} |",
        "",
    ]
    return "\n".join(lines)


def met(ok: bool) -> str:
    return "yes" if ok else "no"


def _machine(info: dict) -> str:
    return (
        f"{info['cpu_model']}, {info['cores']} cores, {info['memory_gib']:.0f} GiB, "
        f"load average at the end {info['load_average']}"
    )


def main() -> int:
    from pyspark.sql.connect.session import SparkSession as ConnectSession

    with tempfile.TemporaryDirectory(prefix="bench-analyst-") as tmp:
        work = Path(tmp)
        ports = {"thrift": free_port(), "connect": free_port()}
        env = {
            **os.environ,
            "LAKEHOUSE_HOME": str(work / "home"),
            "LAKEHOUSE_THRIFT_PORT": str(ports["thrift"]),
            "LAKEHOUSE_SPARK_CONNECT_PORT": str(ports["connect"]),
            "LAKEHOUSE_CONNECT_TOKEN": "",
            "LAKEHOUSE_SCHEMA": PROD,
            "LAKEHOUSE_BRONZE_SCHEMA": f"{PROD}_bronze",
            "LAKEHOUSE_DEV_SCHEMA": DEV,
        }
        env.pop("LAKEHOUSE_TARGET", None)
        env.pop("LAKEHOUSE_PROD_STATE", None)
        cli = Cli(copy_project(work / "project"), env)
        sessions = []

        def connect():
            sessions.append(
                ConnectSession.builder.remote(f"sc://localhost:{ports['connect']}").create()
            )
            return sessions[-1]

        try:
            log("the analyst's loop at the default scale, command by command")
            loop = loop_steps(cli, connect)
            log(f"diff of {DIFF_ROWS:,} rows against its floor")
            diff = diff_vs_floor(cli, sessions[0])
            machine = _machine(machine_info(sessions[0]))
        finally:
            for session in sessions:
                session.stop()
            subprocess.run(
                [sys.executable, "-m", "lakehouse.cli", "--project-dir", str(cli.project),
                 "endpoint", "stop"], env=env, check=False,
            )  # fmt: skip
    results = {
        "finished_at": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "machine": machine,
        "loop": loop,
        "diff": diff,
    }
    REPORT.write_text(render(results))
    print(REPORT.read_text())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
