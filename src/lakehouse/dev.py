"""The analyst's loop (docs/analyst.md): a development schema holding shallow clones of
production (`dbt clone` from the production build's manifest), a slim build of what an edit
changed (`state:modified+`, deferring to production), a keyed diff of a model against
production (delta_ops' `diff_relations`), and dropping the schema again.

Production is the profile's schema (LAKEHOUSE_SCHEMA, default `lakehouse`) with the state its
last build left in `prod_state_dir`; the development schema is LAKEHOUSE_DEV_SCHEMA, else
`dev_<user name>`.
"""

from __future__ import annotations

import getpass
import json
import os
import re
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import unquote, urlparse

from dbt.cli.main import dbtRunnerResult

from lakehouse.dbt_runner import DbtRunner, failures
from lakehouse.delta.audit import delta_tables
from lakehouse.settings import PROJECT_DIR, prod_state_dir


class DevLoopError(RuntimeError):
    """A step of the loop that cannot run; the message says what to do."""


def dev_schema_name(prod_schema: str) -> str:
    """LAKEHOUSE_DEV_SCHEMA, else `dev_` + the user's name in identifier characters."""
    name = os.environ.get("LAKEHOUSE_DEV_SCHEMA") or "dev_" + re.sub(
        r"[^a-z0-9_]", "_", getpass.getuser().lower()
    )
    if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
        raise DevLoopError(
            f"development schema {name!r}: use letters, digits and underscores only "
            "(set LAKEHOUSE_DEV_SCHEMA)."
        )
    if name.lower() == prod_schema.lower():
        raise DevLoopError(
            f"development schema {name!r} is production's schema: set LAKEHOUSE_DEV_SCHEMA "
            "to a schema of your own."
        )
    return name


@dataclass(frozen=True)
class Footprint:
    """What a development schema's tables hold on disk under their own locations."""

    tables: int
    data_bytes: int  # data files written into the clones (a fresh shallow clone has none)
    log_bytes: int  # their Delta logs
    unmeasured: tuple[str, ...] = ()  # tables whose location is not a local path


@dataclass
class DevLoop:
    """The loop's steps for one project, production schema and development schema."""

    project_dir: Path
    prod_schema: str
    dev_schema: str
    state_dir: Path  # production's dbt artifacts (prod_state_dir)
    work_dir: Path | None = None  # the development builds' target/ and logs/ (default: project)

    @classmethod
    def from_env(cls, project_dir: Path = PROJECT_DIR) -> DevLoop:
        prod = os.environ.get("LAKEHOUSE_SCHEMA") or "lakehouse"
        return cls(project_dir, prod, dev_schema_name(prod), prod_state_dir(project_dir))

    def target_dir(self, schema: str) -> Path:
        """dbt's target folder for a step in `schema` on this target: one per schema and
        target, because dbt re-parses the whole project when the profile's schema or target
        differs from its last parse (the drop runs in production's schema)."""
        target = os.environ.get("LAKEHOUSE_TARGET") or "local"
        return (self.work_dir or self.project_dir) / "target" / f"{target}_{schema}"

    def _dbt(self, schema: str) -> DbtRunner:
        return DbtRunner(
            self.project_dir,
            self.project_dir,
            schema,
            work_dir=self.work_dir,
            target_path=self.target_dir(schema),
        )

    def _prod_manifest(self) -> Path:
        manifest = self.state_dir / "manifest.json"
        if not manifest.is_file():
            raise DevLoopError(
                f"no production state in {self.state_dir}: build production first (`make run`, "
                f"`lakehouse run`, or `dbt build --target-path {self.state_dir}` on the "
                "production target), or point LAKEHOUSE_PROD_STATE at its target folder."
            )
        return manifest

    def _invoke(self, schema: str, *args: str, callbacks: list | None = None) -> dbtRunnerResult:
        dbt = self._dbt(schema)
        result = dbt.invoke(*args, expect_success=False, callbacks=callbacks)
        if not result.success:
            said = failures(result, dbt.target_dir / "manifest.json")
            raise DevLoopError(f"dbt {args[0]} in {schema} failed:\n{said}")
        return result

    def clone(self, refresh: bool = False, threads: int = 4) -> tuple[dbtRunnerResult, float]:
        """The development schema as shallow clones of production's tables at their current
        versions (views re-pointed at production); `refresh` re-clones existing ones.
        Returns dbt's result and the seconds it took."""
        self._prod_manifest()
        started = time.perf_counter()
        # --cache-selected-only: dbt then lists production's schema once before the clones
        # (without it, every thread that starts lists it again, cache misses of dbt clone).
        args = ["clone", "--state", str(self.state_dir), "--threads", str(threads)]
        args += ["--cache-selected-only"]
        result = self._invoke(self.dev_schema, *args, *(["--full-refresh"] if refresh else []))
        return result, time.perf_counter() - started

    def build(
        self, *extra: str, callbacks: list | None = None, quiet: bool = False
    ) -> dbtRunnerResult:
        """`dbt build` of the models an edit changed and everything downstream of them, in the
        development schema; unmodified parents it lacks are read from production. A failure
        raises DevLoopError with each error at the line of the model's file it comes from and
        the skipped nodes in one line (`failures`); `quiet` keeps dbt's console output back
        (`BuildLog` prints its result lines)."""
        self._prod_manifest()
        select = ["--select", "state:modified+"] if "--select" not in extra else []
        state = ["--defer", "--state", str(self.state_dir)]
        args = ["build", *select, *state, *extra, *(QUIET if quiet else ())]
        return self._invoke(self.dev_schema, *args, callbacks=callbacks)

    def diff_args(
        self, model: str, key: list[str] | None = None, fail_on_diff: bool = False, **options
    ) -> dict:
        """delta_ops.diff_relations' arguments: production's `model` (a, before) against the
        development schema's (b, after), or with `version` (and `version_b`) two versions of
        production's `model`; the key from the model's config unless given. `options` are
        diff_relations' own (samples, sample_order, seed, save_to; None left out); messages
        name the CLI's flags (DIFF_FLAGS)."""
        args: dict = {"a": f"{self.prod_schema}.{model}"}
        if options.get("version") is None and options.get("version_b") is not None:
            raise DevLoopError("--version-b compares two versions of a model: give --version too.")
        if options.get("version") is None:
            args["b"] = f"{self.dev_schema}.{model}"
        if key:
            args["key"] = key
        args.update({name: value for name, value in options.items() if value is not None})
        return {**args, "fail_on_diff": fail_on_diff, "argument_names": DIFF_FLAGS}

    def diff(
        self,
        model: str,
        key: list[str] | None = None,
        fail_on_diff: bool = False,
        callbacks: list | None = None,
        quiet: bool = False,
        **options,
    ) -> dbtRunnerResult:
        """The diff's summary is logged (and its JSON line for scripts, to `callbacks`);
        `quiet` keeps dbt's console output back (the caller prints what `callbacks` got)."""
        args = json.dumps(self.diff_args(model, key, fail_on_diff, **options))
        return self._dbt(self.dev_schema).invoke(
            "run-operation", "diff_relations", "--args", args, *(QUIET if quiet else ()),
            expect_success=False, callbacks=callbacks,
        )  # fmt: skip

    def drop(
        self, dry_run: bool = True, callbacks: list | None = None, quiet: bool = False
    ) -> dbtRunnerResult:
        """Drop the development schema (a dry run unless told), run against production's target
        so that delta_ops.drop_schema refuses production's own schema."""
        args = json.dumps({"schema": self.dev_schema, "dry_run": dry_run})
        return self._invoke(
            self.prod_schema, "run-operation", "drop_schema", "--args", args,
            *(QUIET if quiet else ()), callbacks=callbacks,
        )  # fmt: skip


# How `lakehouse dev diff` spells diff_relations' arguments, for its messages.
DIFF_FLAGS = {
    "a": "MODEL",
    "key": "--key",
    "version": "--version",
    "version_b": "--version-b",
    "samples": "--samples",
    "sample_order": "--sample-order",
    "seed": "--seed",
    "save_to": "--save-to",
    "fail_on_diff": "--fail-on-diff",
}
# dbt's console output held back (its log file keeps everything): the CLI prints what the
# operation said, in its own words.
QUIET = ("--log-level", "none", "--log-level-file", "debug")
RESULT_PREFIX = "diff_relations result: "


@dataclass
class OperationLog:
    """A dbt callback that keeps what a run-operation said: its log lines and its error."""

    messages: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    def __call__(self, event) -> None:
        name = event.info.name
        if name in ("JinjaLogInfo", "JinjaLogWarning"):
            self.messages.append(event.info.msg)
        elif name in ("RunningOperationCaughtError", "RunningOperationUncaughtError"):
            self.errors.append(operation_error(event.data.exc))

    def diff_result(self) -> dict | None:
        """diff_relations' result, from the JSON line it logs for scripts."""
        found = [m for m in self.messages if m.startswith(RESULT_PREFIX)]
        return json.loads(found[-1].removeprefix(RESULT_PREFIX)) if found else None

    def lines(self) -> list[str]:
        """What a person reads: the log lines but the JSON one, in the CLI's words."""
        return [cli_wording(m) for m in self.messages if not m.startswith(RESULT_PREFIX)]


@dataclass
class BuildLog:
    """A dbt callback printing what a build did, one line a node ("3 of 5 OK created sql table
    model dev_ann.fct_orders ... [OK in 2.1s]"), warnings and dbt's closing count; not its
    skip lines nor its errors' full text (the SQL Spark echoes): `failures` says those at the
    user's line, after the build."""

    write: Callable[[str], None] = print
    lines: list[str] = field(default_factory=list)

    def __call__(self, event) -> None:
        name, level = event.info.name, event.info.level
        if name in BUILD_LINES or (level == "warn" and name not in BUILD_HIDDEN):
            line = ANSI_COLOUR.sub("", event.info.msg) if self.plain else event.info.msg
            self.lines.append(line)
            self.write(line)

    @property
    def plain(self) -> bool:
        return not sys.stdout.isatty()


# dbt's console lines `lakehouse dev build` shows: what was found, one line per node run, the
# count at the end; the skip lines and the errors' full text are summarised after the build.
BUILD_LINES = {
    "FoundStats",
    "ConcurrencyLine",
    "NothingToDo",
    "LogModelResult",
    "LogTestResult",
    "LogSeedResult",
    "LogSnapshotResult",
    "LogNodeResult",
    "LogNodeNoOpResult",
    "LogFunctionResult",
    "LogBatchResult",
    "LogHookEndLine",
    "StatsLine",
}
BUILD_HIDDEN = {"LogSkipBecauseError", "RunResultFailure", "RunResultError"}
ANSI_COLOUR = re.compile(r"\x1b\[[0-9;]*m")


def operation_error(text: str) -> str:
    """A run-operation's error without dbt's frame: the "Runtime Error" or "Compilation Error
    in macro x (path)" headings (the adapter wraps a macro's error in one more) and the
    "> in macro ... > called by ..." trail."""
    heading = re.compile(r"\w[\w ]* Error( in \w+ \S+ \(.*\))?")
    lines = [line.strip() for line in text.strip().splitlines()]
    kept = [line for line in lines if line and not line.startswith(">")]
    return cli_wording(" ".join(line for line in kept if not heading.fullmatch(line)))


def cli_wording(message: str) -> str:
    """An operation's advice in the words of the `lakehouse dev` command that ran it."""
    return message.replace(
        "Pass dry_run: false to drop it.", "Run `lakehouse dev drop --yes` to drop it."
    )


def footprint(spark, schema: str) -> Footprint:
    """Bytes under each Delta table's own location in `schema`: data files vs. Delta log."""
    data = log = 0
    unmeasured = []
    tables = delta_tables(spark, schema)
    for name, uri in tables.items():
        location = urlparse(uri)
        if location.scheme not in ("", "file"):
            unmeasured.append(name)
            continue
        for path in Path(unquote(location.path)).rglob("*"):
            if path.is_file():
                if "_delta_log" in path.parts:
                    log += path.stat().st_size
                else:
                    data += path.stat().st_size
    return Footprint(len(tables), data, log, tuple(unmeasured))


def human_bytes(count: int) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if count < 1024 or unit == "GiB":
            return f"{count:.0f} {unit}" if unit == "B" else f"{count:.1f} {unit}"
        count /= 1024
    raise AssertionError("unreachable")
