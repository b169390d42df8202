"""`make bench-analyst`: the analyst's loop (docs/analyst.md) timed at the project's default scale
(`lakehouse run`'s 1,000 orders), and `diff_relations` of a 1M-row table against the engine's
floor for the same work (one full scan of both sides). Writes docs/bench/analyst.md.

Everything runs in this process on the `local` target's SparkSession, dbt in-process, in
throw-away schemas and a throw-away copy of the project (the loop edits a model). Targets: a
development schema of the whole project in <= 10 s writing < 1 MiB of data files; a diff of a
1M-row model in <= 2x one full scan of both sides.
"""

from __future__ import annotations

import json
import os
import statistics
import tempfile
from datetime import UTC, datetime
from pathlib import Path

from dbt.adapters.sparkdelta.session import get_or_create_session
from lakehouse.bench.measure import log, machine_info, seconds_of
from lakehouse.dbt_runner import DbtRunner, copy_project
from lakehouse.dev import DevLoop, footprint, human_bytes
from lakehouse.settings import PROJECT_DIR, session_settings
from lakehouse.shop.bronze import load_batches
from lakehouse.shop.generator import ShopGenerator

REPORT = PROJECT_DIR / "docs" / "bench" / "analyst.md"
ORDERS = 1000  # `lakehouse run`'s default scale
DIFF_ROWS = 1_000_000
REPEATS = 3
EDIT = (
    "order_statuses.is_final as is_status_final,",
    "case when orders.status = 'shipped' then true else order_statuses.is_final end"
    " as is_status_final,",
)


def _drop(spark, *schemas: str) -> None:
    for schema in schemas:
        spark.sql(f"drop schema if exists `{schema}` cascade")


def loop_steps(spark, work: Path) -> dict:
    """Production built, then each step of the loop once, timed; the clone's floor: the same
    SHALLOW CLONE statements issued directly, one after another."""
    prod, bronze, dev, floor = "bench_prod", "bench_prod_bronze", "bench_dev", "bench_clone_floor"
    _drop(spark, prod, bronze, dev, floor)
    project = copy_project(work / "project")
    state = work / "prod-state"
    loop = DevLoop(project, prod, dev, state, work_dir=work / "dev")
    steps: dict[str, float] = {}
    load_batches(spark, ShopGenerator(orders=ORDERS, seed=42), bronze, 0)
    prod_dbt = DbtRunner(project, project, prod, bronze, target_path=state, quiet=True)
    steps["production build (dbt build)"] = seconds_of(lambda: prod_dbt.invoke("build"))
    os.environ["LAKEHOUSE_BRONZE_SCHEMA"] = bronze
    _, steps["dev schema: lakehouse dev clone"] = loop.clone()
    used = footprint(spark, dev)
    listed = spark.catalog.listTables(prod)  # the session's temporary views too
    tables = [t.name for t in listed if not t.isTemporary and t.tableType != "VIEW"]
    spark.sql(f"create schema `{floor}`")
    steps["floor: SHALLOW CLONE of each table, direct"] = seconds_of(
        lambda: [
            spark.sql(f"create table `{floor}`.`{t}` shallow clone `{prod}`.`{t}`") for t in tables
        ]
    )
    edited = project / "models" / "marts" / "fct_orders.sql"
    edited.write_text(edited.read_text().replace(*EDIT))
    steps["slim build: lakehouse dev build"] = seconds_of(loop.build)
    steps["diff: lakehouse dev diff fct_orders"] = seconds_of(lambda: loop.diff("fct_orders"))
    steps["drop: lakehouse dev drop --yes"] = seconds_of(lambda: loop.drop(dry_run=False))
    _drop(spark, prod, bronze, floor)
    return {
        "steps": steps,
        "tables": used.tables,
        "data_bytes": used.data_bytes,
        "log_bytes": used.log_bytes,
    }


def diff_vs_floor(spark, work: Path) -> dict:
    """diff_relations of two 1M-row tables (1% changed, 0.5% only in each side) against one
    full scan of both sides (a hash over every column, each side read once)."""
    schema = "bench_diff"
    _drop(spark, schema)
    spark.sql(f"create schema `{schema}`")
    spark.sql(
        f"create table `{schema}`.a using delta as select id, id % 5000 as customer_id, "
        "cast(id % 997 * 1.25 as decimal(18, 2)) as amount, "
        "element_at(array('placed', 'paid', 'shipped'), cast(id % 3 + 1 as int)) as status, "
        "timestamp_seconds(1700000000 + id) as updated_at, "
        "if(id % 10 = 0, null, concat('note ', id)) as note "
        f"from range({DIFF_ROWS})"
    )
    spark.sql(
        f"create table `{schema}`.b using delta as "
        "select id, customer_id, if(id % 100 = 7, amount + 1, amount) as amount, status, "
        f"updated_at, note from `{schema}`.a where id % 200 != 3 "
        f"union all select id, 0, 0, 'placed', timestamp_seconds(0), null "
        f"from range({DIFF_ROWS}, {DIFF_ROWS + DIFF_ROWS // 200})"
    )
    dbt = DbtRunner(PROJECT_DIR, PROJECT_DIR, schema, work_dir=work / "diff", quiet=True)
    runs: dict[str, list[float]] = {"diff_s": [], "query_s": [], "no_samples_s": [], "floor_s": []}

    def diff(samples: int) -> float:
        """The run-operation's wall time; its own timing of the diff queries goes to query_s."""
        logged: list[str] = []
        args = json.dumps(
            {"a": f"{schema}.a", "b": f"{schema}.b", "key": ["id"], "samples": samples}
        )
        seconds = seconds_of(
            lambda: dbt.invoke(
                "run-operation",
                "diff_relations",
                "--args",
                args,
                callbacks=[lambda e: logged.append(e.info.msg)],
            )  # fmt: skip
        )
        [line] = [m for m in logged if m.startswith("diff_relations result: ")]
        if samples:
            runs["query_s"].append(json.loads(line.split(": ", 1)[1])["seconds"])
        return seconds

    for _ in range(REPEATS):
        runs["floor_s"].append(
            seconds_of(
                lambda: [
                    spark.sql(f"select sum(xxhash64(*)) from `{schema}`.{side}").collect()
                    for side in ("a", "b")
                ]
            )
        )
        runs["diff_s"].append(diff(samples=5))
        runs["no_samples_s"].append(diff(samples=0))
    _drop(spark, schema)
    return {name: statistics.median(values) for name, values in runs.items()}


def render(results: dict) -> str:
    loop, diff = results["loop"], results["diff"]
    clone_s = loop["steps"]["dev schema: lakehouse dev clone"]
    ratio = diff["diff_s"] / diff["floor_s"]
    lines = [
        "# The analyst's loop: measured",
        "",
        f"Written by `make bench-analyst` on {results['finished_at']} "
        f"({results['machine']}). Default scale: {ORDERS:,} orders, batch 0.",
        "",
        "| step | seconds |",
        "|---|---:|",
        *(f"| {name} | {seconds:.1f} |" for name, seconds in loop["steps"].items()),
        "",
        f"The development schema's {loop['tables']} Delta tables wrote "
        f"{human_bytes(loop['data_bytes'])} of data files and "
        f"{human_bytes(loop['log_bytes'])} of Delta log.",
        "",
        f"Diff of two {DIFF_ROWS:,}-row tables (`diff_relations` as a run-operation, median "
        f"of {REPEATS}): {diff['diff_s']:.1f} s in all, of which the diff's queries (counts and "
        f"sample keys, timed by the operation itself) {diff['query_s']:.1f} s; without sample "
        f"keys {diff['no_samples_s']:.1f} s in all. One full scan of both sides (the floor): "
        f"{diff['floor_s']:.1f} s; ratio of the whole operation {ratio:.2f}, of its queries "
        f"{diff['query_s'] / diff['floor_s']:.2f}. The rest is dbt's start-up and the key's "
        "uniqueness check (one aggregation per side).",
        "",
        "| target | measured | met |",
        "|---|---|---|",
        f"| dev schema of the whole project <= 10 s | {clone_s:.1f} s | "
        f"{'yes' if clone_s <= 10 else 'no'} |",
        f"| ... writing < 1 MiB of data files | {human_bytes(loop['data_bytes'])} | "
        f"{'yes' if loop['data_bytes'] < 1024**2 else 'no'} |",
        f"| diff of 1M rows <= 2x a full scan of both sides | {ratio:.2f}x | "
        f"{'yes' if ratio <= 2 else 'no'} |",
        "",
    ]
    return "\n".join(lines)


def _machine(info: dict) -> str:
    return (
        f"{info['cpu_model']}, {info['cores']} cores, {info['memory_gib']:.0f} GiB, "
        f"load average at the end {info['load_average']}"
    )


def main() -> int:
    spark = get_or_create_session(session_settings(PROJECT_DIR))
    with tempfile.TemporaryDirectory(prefix="bench-analyst-") as tmp:
        work = Path(tmp)
        log("the analyst's loop at the default scale")
        loop = loop_steps(spark, work)
        log(f"diff of {DIFF_ROWS:,} rows against its floor")
        diff = diff_vs_floor(spark, work)
    results = {
        "finished_at": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "machine": _machine(machine_info(spark)),
        "loop": loop,
        "diff": diff,
    }
    REPORT.write_text(render(results))
    print(REPORT.read_text())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
