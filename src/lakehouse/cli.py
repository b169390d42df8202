"""`lakehouse` command: load bronze data and run the project's main job in one Spark process."""

from __future__ import annotations

import argparse
import logging
import os
import sys
from pathlib import Path

from lakehouse.bronze import DEFAULT_BRONZE_SCHEMA, load_batches
from lakehouse.generator import ShopGenerator
from lakehouse.spark import DeltaRuntimeUnavailable, LakehouseSettings, get_or_create_session


def _project_dir(args: argparse.Namespace) -> Path:
    return Path(args.project_dir).resolve()


def _session(args: argparse.Namespace):
    return get_or_create_session(LakehouseSettings.from_env(_project_dir(args)))


def _generator(args: argparse.Namespace) -> ShopGenerator:
    return ShopGenerator(orders=args.orders, seed=args.seed)


def cmd_load(args: argparse.Namespace) -> int:
    loaded = load_batches(_session(args), _generator(args), args.bronze_schema, args.through)
    for batch_id, counts in loaded.items():
        print(f"bronze batch {batch_id}: " + ", ".join(f"{t}={n}" for t, n in counts.items()))
    return 0


def run_dbt(project_dir: Path, *dbt_args: str) -> bool:
    """Invoke dbt in this process, so it reuses the already started SparkSession."""
    from dbt.cli.main import dbtRunner

    args = [*dbt_args, "--project-dir", str(project_dir), "--profiles-dir", str(project_dir)]
    return dbtRunner().invoke(args).success


def cmd_run(args: argparse.Namespace) -> int:
    """The main job: land the initial batch in bronze, then `dbt build` the whole project."""
    project_dir = _project_dir(args)
    os.environ.setdefault("LAKEHOUSE_BRONZE_SCHEMA", args.bronze_schema)
    load_batches(_session(args), _generator(args), args.bronze_schema, 0)
    return 0 if run_dbt(project_dir, "build") else 1


def cmd_endpoint(args: argparse.Namespace) -> int:
    from lakehouse import endpoint

    settings = endpoint.EndpointSettings.from_env(_project_dir(args))
    try:
        if args.action == "start":
            print(f"endpoint {endpoint.start(settings, timeout=args.timeout)}")
        elif args.action == "stop":
            print(f"endpoint {endpoint.stop(settings)}")
        else:
            healthy, line = endpoint.status(settings)
            print(f"endpoint {line}")
            return 0 if healthy else 1
    except endpoint.EndpointError as exc:
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
    load.set_defaults(func=cmd_load)

    run = commands.add_parser("run", help="load the initial batch and `dbt build` the project")
    run.set_defaults(func=cmd_run)

    endpoint = commands.add_parser(
        "endpoint", help="start, stop or check the local Spark Thrift + Spark Connect endpoint"
    )
    endpoint.add_argument("action", choices=["start", "stop", "status"])
    endpoint.add_argument(
        "--timeout", type=float, default=300.0, help="seconds to wait for a healthy start"
    )
    endpoint.set_defaults(func=cmd_endpoint)
    return parser


def main(argv: list[str] | None = None) -> int:
    logging.basicConfig(level=logging.WARNING, format="%(message)s")
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except DeltaRuntimeUnavailable as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
