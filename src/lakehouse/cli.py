"""`lakehouse` command: load bronze data (`load`), run the project's main job in one Spark process
(`run`), an analyst's development schema (`dev`), inspect a Delta table's log (`inspect`), and
run the local Spark endpoint (`endpoint`), standalone cluster (`cluster`) and shared Hive
metastore (`metastore`)."""

from __future__ import annotations

import argparse
import logging
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from dbt.adapters.sparkdelta.session import (
    DeltaRuntimeUnavailable,
    MetastoreInUse,
    MetastoreUnavailable,
    SessionHomeMismatch,
    get_or_create_session,
)
from lakehouse.dbt_runner import DbtRunner, environment
from lakehouse.settings import prod_state_dir, profile_output, session_settings
from lakehouse.shop.bronze import DEFAULT_BRONZE_SCHEMA, load_batches
from lakehouse.shop.generator import ShopGenerator
from lakehouse.summary import delta_versions, render_summary

if TYPE_CHECKING:
    from lakehouse.dev import DevLoop, OperationLog


def _project_dir(args: argparse.Namespace) -> Path:
    return Path(args.project_dir).resolve()


def _session(args: argparse.Namespace):
    """The Spark session of LAKEHOUSE_TARGET: embedded for `local`; for a remote target, a Spark
    Connect session to its endpoint, so loading bronze needs no second metastore client."""
    project_dir = _project_dir(args)
    target = os.environ.get("LAKEHOUSE_TARGET") or "local"
    output = profile_output(target, project_dir)
    if output.get("method") == "session":
        return get_or_create_session(session_settings(project_dir))
    from pyspark.sql.connect.session import SparkSession as ConnectSession

    from dbt.adapters.sparkdelta.spark_connect import close_at_exit, with_token

    url = with_token(output["spark_connect_url"], output.get("token") or None)
    session = ConnectSession.builder.remote(url).getOrCreate()
    close_at_exit(session)
    return session


def _generator(args: argparse.Namespace) -> ShopGenerator:
    return ShopGenerator(orders=args.orders, seed=args.seed)


def cmd_load(args: argparse.Namespace) -> int:
    loaded = load_batches(_session(args), _generator(args), args.bronze_schema, args.through)
    for batch_id, counts in loaded.items():
        appended = ", ".join(f"{t}={n}" for t, n in counts.items())
        print(f"bronze batch {batch_id}: {f'appended {appended}' if counts else 'already loaded'}")
    return 0


def cmd_run(args: argparse.Namespace) -> int:
    """The main job: land the initial batch and `dbt build`; land the first change batch and
    `dbt build` again; then show what Delta did with that batch. A production build: dbt's
    artifacts go to the production state folder, where the analyst's loop finds them."""
    project_dir = _project_dir(args)
    state = prod_state_dir(project_dir)
    dbt = DbtRunner(project_dir, project_dir, bronze_schema=args.bronze_schema, target_path=state)
    schema = profile_output(os.environ.get("LAKEHOUSE_TARGET") or "local", project_dir)["schema"]
    spark = _session(args)
    load_batches(spark, _generator(args), args.bronze_schema, 0)
    if not dbt.invoke("build", expect_success=False).success:
        return 1
    before = delta_versions(spark, schema)
    load_batches(spark, _generator(args), args.bronze_schema, 1)
    if not dbt.invoke("build", expect_success=False).success:
        return 1
    print(render_summary(spark, schema, before, delta_versions(spark, schema)))
    print(f"production state (for --state/--defer and `lakehouse dev`): {state}/manifest.json")
    return 0


def cmd_dev(args: argparse.Namespace) -> int:
    """The analyst's loop in the development schema: clone, build, diff, drop."""
    from lakehouse.dev import (
        BuildLog,
        DevLoop,
        DevLoopError,
        OperationLog,
        footprint,
        human_bytes,
    )

    said = OperationLog()
    try:
        loop = DevLoop.from_env(_project_dir(args))
        if args.action == "clone":
            spark = _session(args)
            result, seconds = loop.clone(refresh=args.refresh)
            done = [r for r in result.result if r.status == "success"]
            used = footprint(spark, loop.dev_schema)
            print(
                f"dev schema {loop.dev_schema}: {len(done)} relations cloned from "
                f"{loop.prod_schema} in {seconds:.1f} s; its {used.tables} Delta tables wrote "
                f"{human_bytes(used.data_bytes)} of data files and {human_bytes(used.log_bytes)} "
                "of Delta log (shallow clones read production's files)"
                + (f"; not measured: {', '.join(used.unmeasured)}" if used.unmeasured else "")
            )
        elif args.action == "build":
            options = ["--select", args.select] if args.select else []
            options += ["--full-refresh"] if args.full_refresh else []
            loop.build(*options, callbacks=[BuildLog()], quiet=True)
        elif args.action == "diff":
            return _dev_diff(loop, args, said)
        else:
            loop.drop(dry_run=not args.yes, callbacks=[said], quiet=True)
            print("\n".join(said.lines()))
    except DevLoopError as exc:
        if said.messages:
            print("\n".join(said.lines()), file=sys.stderr)
        print(f"error: {said.errors[-1] if said.errors else exc}", file=sys.stderr)
        return 2
    return 0


def _dev_diff(loop: DevLoop, args: argparse.Namespace, said: OperationLog) -> int:
    """The diff's summary, then its one-line verdict; 1 when data differ and --fail-on-diff
    is given, 2 when the diff cannot run (the message names the flag to change)."""
    options = {
        "version": args.version,
        "version_b": args.version_b,
        "samples": args.samples,
        "sample_order": args.sample_order,
        "seed": args.seed,
        "save_to": args.save_to,
    }
    result = loop.diff(args.model, args.key, callbacks=[said], quiet=True, **options)
    print("\n".join(said.lines()))
    summary = said.diff_result()
    if not result.success or summary is None:
        error = said.errors[-1] if said.errors else str(result.exception or "see dbt's log")
        print(f"error: {error}", file=sys.stderr)
        return 2
    if args.fail_on_diff and summary["differs"]:
        print(f"{summary['summary']} (--fail-on-diff: exit 1)", file=sys.stderr)
        return 1
    return 0


def _is_path(target: str) -> bool:
    return "/" in target or ":" in target or Path(target).exists()


def cmd_inspect(args: argparse.Namespace) -> int:
    """Report a Delta table's log: every version, then the reconstructed snapshot."""
    import json

    from pyspark.errors import AnalysisException

    from lakehouse.delta.audit import table_location
    from lakehouse.delta.conformance import check_conformance
    from lakehouse.delta.log import DeltaLog, DeltaLogError

    try:
        # A path needs no Spark; a table name is resolved through DESCRIBE DETAIL.
        location = (
            args.table if _is_path(args.table) else table_location(_session(args), args.table)
        )
        log = DeltaLog(location)
        snapshot = log.snapshot(args.version)
        versions = [r for r in log.iter_history() if r.version <= snapshot.version]
    except (DeltaLogError, ValueError, AnalysisException) as exc:
        print(f"error: {args.table}: {str(exc).splitlines()[0]}", file=sys.stderr)
        return 1
    violations = check_conformance(log, snapshot.configuration) if args.check else []
    if args.json:
        report = {
            "table": location,
            "last_checkpoint": log.last_checkpoint(),
            "versions": [r.summary() for r in versions],
            "snapshot": snapshot.summary(),
            "violations": [str(v) for v in violations],
        }
        print(json.dumps(report, indent=2, default=str))
    else:
        print(f"table {location}")
        for r in versions:
            actions = " ".join(f"{k}={n}" for k, n in r.action_counts.items())
            print(
                f"  v{r.version} {r.timestamp} {r.operation or '-'}: files +{r.files_added} "
                f"-{r.files_removed}, records +{r.records_added} -{r.records_removed}, "
                f"cdc {r.cdc_files}, row id high-water mark {r.row_id_high_water_mark} [{actions}]"
            )
        for key, value in snapshot.summary().items():
            print(f"  {key}: {value}")
        if args.check:
            print(f"  conformance: {len(violations)} violation(s)")
            for violation in violations:
                print(f"    {violation}")
    return 1 if violations else 0


def _manage(name: str, module, settings, args: argparse.Namespace) -> int:
    """start | stop | status of a background service (the endpoint, the cluster)."""
    from lakehouse.processes import ProcessError

    try:
        if args.action == "start":
            print(f"{name} {module.start(settings, timeout=args.timeout)}")
        elif args.action == "stop":
            print(f"{name} {module.stop(settings)}")
        else:
            healthy, line = module.status(settings)
            print(f"{name} {line}")
            return 0 if healthy else 1
    except ProcessError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0


def cmd_endpoint(args: argparse.Namespace) -> int:
    from lakehouse import endpoint

    return _manage(
        "endpoint", endpoint, endpoint.EndpointSettings.from_env(_project_dir(args)), args
    )


def cmd_cluster(args: argparse.Namespace) -> int:
    from lakehouse import cluster

    try:
        settings = cluster.ClusterSettings.from_env(_project_dir(args))
    except cluster.ClusterError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return _manage("cluster", cluster, settings, args)


def cmd_metastore(args: argparse.Namespace) -> int:
    """The local PostgreSQL metastore; `init` initialises any one (LAKEHOUSE_METASTORE_URL).
    `start` prints shell lines to export, and everything else as `#` comments, so
    `eval "$(lakehouse metastore start)"` points this shell at it."""
    from lakehouse import metastore

    try:
        settings = metastore.MetastoreSettings.from_env(_project_dir(args))
        if args.action == "start":
            print(metastore.start(settings, timeout=args.timeout))
        elif args.action == "stop":
            print(f"metastore {metastore.stop(settings)}")
        elif args.action == "init":
            if not settings.url:
                raise metastore.MetastoreError(
                    "Set LAKEHOUSE_METASTORE_URL (jdbc:postgresql://host:port/database), "
                    "LAKEHOUSE_METASTORE_USER and LAKEHOUSE_METASTORE_PASSWORD to the database "
                    "to initialise (`lakehouse metastore start` does it for the local one)."
                )
            done = metastore.init_schema(settings, settings.url, settings.password)
            print(f"metastore {metastore.redact_jdbc_url(settings.url)}: {done}")
        else:
            healthy, line = metastore.status(settings)
            print(f"metastore {line}")
            return 0 if healthy else 1
    except metastore.MetastoreError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="lakehouse", description=__doc__)
    parser.add_argument("--project-dir", default=os.getcwd(), help="dbt project directory")
    parser.add_argument(
        "--bronze-schema",
        default=os.environ.get("LAKEHOUSE_BRONZE_SCHEMA", DEFAULT_BRONZE_SCHEMA),
        help="schema of the bronze landing tables (env LAKEHOUSE_BRONZE_SCHEMA)",
    )
    parser.add_argument("--orders", type=int, default=1000, help="orders in the initial load")
    parser.add_argument("--seed", type=int, default=42, help="generator seed")
    commands = parser.add_subparsers(dest="command", required=True)

    load = commands.add_parser("load", help="append generated batches 0..N to bronze")
    load.add_argument("--through", type=int, default=0, help="last batch to load")
    load.set_defaults(func=cmd_load, engine="reuse")

    run = commands.add_parser(
        "run", help="load batch 0, `dbt build`, load batch 1, `dbt build`, show a summary"
    )
    run.set_defaults(func=cmd_run, engine="reuse")

    dev = commands.add_parser(
        "dev",
        help="your development schema (LAKEHOUSE_DEV_SCHEMA, else dev_<user>): clone "
        "production into it, build what you changed, diff a model against production, drop it",
    )
    steps = dev.add_subparsers(dest="action", required=True)
    clone = steps.add_parser("clone", help="shallow-clone production's relations into it")
    clone.add_argument("--refresh", action="store_true", help="re-clone existing tables too")
    build = steps.add_parser(
        "build", help="dbt build state:modified+ in it, deferring the rest to production"
    )
    build.add_argument("-s", "--select", help="dbt's --select instead of state:modified+")
    build.add_argument("--full-refresh", action="store_true", help="dbt's --full-refresh")
    diff = steps.add_parser("diff", help="a keyed data diff of a model: production vs. yours")
    diff.add_argument("model", help="the model to compare, e.g. fct_orders")
    diff.add_argument("--key", action="append", help="a key column (repeat; default unique_key)")
    diff.add_argument(
        "--fail-on-diff", action="store_true", help="exit 1 when anything differs (CI)"
    )
    diff.add_argument(
        "--version",
        type=int,
        help="compare this Delta version of production's MODEL (before) with it now (after)",
    )
    diff.add_argument(
        "--version-b", type=int, help="with --version: the version to compare with (after)"
    )
    diff.add_argument("--samples", type=int, help="sample rows of each kind (default 5)")
    diff.add_argument(
        "--sample-order",
        choices=["key", "random"],
        help="the smallest keys (default) or a seeded random choice",
    )
    diff.add_argument("--seed", type=int, help="the random samples' seed (default 0)")
    diff.add_argument(
        "--save-to",
        metavar="TABLE",
        help="write the rows that differ to TABLE (default schema: yours; never production's)",
    )
    drop = steps.add_parser("drop", help="drop it (a dry run unless --yes)")
    drop.add_argument("--yes", action="store_true", help="really drop it")
    dev.set_defaults(func=cmd_dev, engine="start")

    inspect = commands.add_parser("inspect", help="report a Delta table's transaction log")
    inspect.add_argument("table", help="a table path (no Spark needed) or a schema.table name")
    inspect.add_argument("--version", type=int, help="snapshot version (default: latest)")
    inspect.add_argument("--json", action="store_true", help="print the report as JSON")
    inspect.add_argument(
        "--check", action="store_true", help="check the log against the table's own properties"
    )
    inspect.set_defaults(func=cmd_inspect)

    endpoint = commands.add_parser(
        "endpoint", help="start, stop or check the local Spark Thrift + Spark Connect endpoint"
    )
    endpoint.add_argument("action", choices=["start", "stop", "status"])
    endpoint.add_argument(
        "--timeout", type=float, default=300.0, help="seconds to wait for a healthy start"
    )
    endpoint.set_defaults(func=cmd_endpoint)

    cluster = commands.add_parser(
        "cluster", help="start, stop or check a local Spark standalone cluster (master + workers)"
    )
    cluster.add_argument("action", choices=["start", "stop", "status"])
    cluster.add_argument(
        "--timeout", type=float, default=120.0, help="seconds to wait for the workers"
    )
    cluster.set_defaults(func=cmd_cluster)

    metastore = commands.add_parser(
        "metastore",
        help="start, stop or check a local PostgreSQL Hive metastore; init any one's schema",
    )
    metastore.add_argument("action", choices=["start", "stop", "status", "init"])
    metastore.add_argument(
        "--timeout", type=float, default=120.0, help="seconds to wait for the server"
    )
    metastore.set_defaults(func=cmd_metastore)
    return parser


def _on_engine(args: argparse.Namespace) -> int:
    """The command on its Spark (`lakehouse.engine`): `engine` is "start" for the loop's
    steps (the warm endpoint, started on first use), "reuse" for commands that use a running
    endpoint but start none; other commands choose nothing."""
    from lakehouse.engine import engine_env
    from lakehouse.processes import ProcessError

    if not getattr(args, "engine", None):
        return args.func(args)
    try:
        env = engine_env(_project_dir(args), start=args.engine == "start")
    except ProcessError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    with environment(env):
        return args.func(args)


def main(argv: list[str] | None = None) -> int:
    logging.basicConfig(level=logging.WARNING, format="%(message)s")
    args = build_parser().parse_args(argv)
    try:
        return _on_engine(args)
    except DeltaRuntimeUnavailable as exc:
        # the adapter names Spark's settings; this project sets them through its environment
        hint = "In this project: LAKEHOUSE_MAVEN_REPOSITORIES, LAKEHOUSE_IVY_SETTINGS."
        if isinstance(exc, MetastoreInUse):
            hint = (
                "In this project: this home's endpoint holds it while it runs; leave "
                "LAKEHOUSE_TARGET unset (or set it to thrift) to use it, or `lakehouse "
                "endpoint stop`."
            )
        elif isinstance(exc, MetastoreUnavailable):
            hint = (
                "In this project: LAKEHOUSE_METASTORE_URL (empty: embedded Derby), "
                "LAKEHOUSE_METASTORE_USER, LAKEHOUSE_METASTORE_PASSWORD, "
                "LAKEHOUSE_METASTORE_DRIVER; a local one: `lakehouse metastore start` "
                "(docs/metastore.md)."
            )
        print(f"error: {exc} {hint}", file=sys.stderr)
        return 2
    except SessionHomeMismatch as exc:
        # the session home is LAKEHOUSE_HOME here
        print(f"error: {exc} In this project the session home is LAKEHOUSE_HOME.", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
