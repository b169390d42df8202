"""What failed in a dbt invocation, said at the user's own line: a model's compile or SQL error
located in the model's source file, never the compiled SQL re-printed, the skipped nodes in one
line. Pure logic (no dbt runtime, no Spark): `lakehouse.dbt_runner.failures` feeds it dbt's
results.

Spark says where an error is in the SQL it ran, which is not the user's file: a model's
statement is wrapped (`create or replace table ... as`), `ref()`s are rendered, and a unit test
runs the model's SQL inside its own with its inputs as CTEs. So the compiled line number alone
cannot be mapped back. What Spark also gives is the text: a parse error echoes the whole
statement with a `---^^^` marker under the failing line, an analysis error the fragment it
points at with some context. That text is searched in the model's source; a line that Jinja
changed (a `ref`, a macro call) is found by aligning the SQL Spark ran with the source line by
line (`difflib`): lines dbt left alone align exactly, and a rendered line falls in the block of
the source line it came from.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Sequence
from dataclasses import dataclass

# Spark's positions: a parse error's "(line 3, pos 4)", an analysis error's "; line 3 pos 4",
# and a query context's "== SQL (line 3, position 5) ==" (1-based there).
PARSE_POSITION = re.compile(r"\(line (\d+), pos (\d+)\)")
ANALYSIS_POSITION = re.compile(r"; line (\d+) pos (\d+)")
CONTEXT_HEADER = re.compile(r"^== SQL(?: of [^(]*?)? ?\(line (\d+), position (\d+)\) ==$")
STATEMENT_HEADER = "== SQL =="
PARSE_CARET = re.compile(r"^(-*)\^\^\^$")
CONTEXT_CARET = re.compile(r"^( *)(\^+)\s*$")
# dbt's headings ("Runtime Error in model x (path)", "Compilation Error in unit_test y (path)")
HEADING = re.compile(r"^\s*(\w[\w ]*? Error)(?: in (\w+) (\S+) \((.*?)\))?\s*$")
UNIT_TEST_HINT = re.compile(
    r"An error occurred during execution of unit test '[^']*'\. There may be an error in the "
    r"unit test definition: check the data types\.\s*"
)
JINJA_LINE = re.compile(r"^\s*line (\d+)\s*$", re.M)
MAX_MESSAGE = 1000
# "org.apache.hive.service.cli.HiveSQLException: Error running query: " and the like.
THRIFT_WRAPPING = re.compile(
    r"(?:\b(?:[a-z_][a-z0-9_]*\.)+[A-Z]\w*(?:Exception|Error): )|(?:\bError running query: )"
)
# "[PARSE_SYNTAX_ERROR] [PARSE_SYNTAX_ERROR] Syntax error": Spark's class said twice
REPEATED_CLASS = re.compile(r"(\[[A-Z_.]+\]) \1")


@dataclass(frozen=True)
class ErrorSite:
    """Where Spark says an error is, in the SQL it ran."""

    line: int  # 1-based, in the statement Spark ran
    position: int | None = None  # 0-based column in that line
    text: str | None = None  # that whole line (a parse error echoes the statement)
    fragment: str | None = None  # what an analysis error points at
    statement: tuple[str, ...] = ()  # the statement Spark echoed, if it did


def error_site(message: str) -> ErrorSite | None:
    """The position of a Spark error in the SQL it ran, with the failing line's text or
    fragment when the message carries them; None when the message names no position. dbt
    indents a message's lines under its heading (twice when wrapped): Spark's blocks are read
    relative to the indentation of their `== SQL` line."""
    lines = message.splitlines()
    for index, line in enumerate(lines):
        if line.strip() == STATEMENT_HEADER:
            site = _statement_site(_dedented(lines[index + 1 :], line))
            if site is not None:
                return site
        header = CONTEXT_HEADER.match(line.strip())
        if header:
            number, column = int(header.group(1)), int(header.group(2)) - 1
            return _context_site(number, column, _dedented(lines[index + 1 : index + 6], line))
    for pattern in (PARSE_POSITION, ANALYSIS_POSITION):
        found = pattern.search(message)
        if found:
            return ErrorSite(int(found.group(1)), int(found.group(2)))
    return None


def _dedented(lines: list[str], header: str) -> list[str]:
    indent = header[: len(header) - len(header.lstrip())]
    return [line[len(indent) :] if line.startswith(indent) else line.lstrip() for line in lines]


def _statement_site(below: list[str]) -> ErrorSite | None:
    """A parse error: the statement down to the failing line, "----^^^", the rest of it."""
    for index, line in enumerate(below):
        caret = PARSE_CARET.match(line.rstrip())
        if caret and index > 0:
            # Spark's "(line N, pos M)": N is this line of the echo, M the marker's dashes
            statement = _until_blank_tail(tuple(below[:index] + below[index + 1 :]))
            return ErrorSite(index, len(caret.group(1)), below[index - 1], None, statement)
    return None


def _context_site(number: int, column: int, below: list[str]) -> ErrorSite:
    """An analysis error's query context: the fragment (with some context) above its "^^^"."""
    for index, line in enumerate(below):
        caret = CONTEXT_CARET.match(line)
        if caret and index > 0:
            left, width = len(caret.group(1)), len(caret.group(2))
            fragment = below[index - 1][left : left + width].strip() or None
            return ErrorSite(number, column, None, fragment)
    return ErrorSite(number, column)


def _until_blank_tail(lines: tuple[str, ...]) -> tuple[str, ...]:
    """The echoed statement without what follows it (a blank line, then a JVM trace)."""
    for index, line in enumerate(lines):
        if line.startswith(("JVM stacktrace:", "\tat ", "Traceback")):
            lines = lines[:index]
            break
    while lines and not lines[-1].strip():
        lines = lines[:-1]
    return lines


def _norm(line: str) -> str:
    return " ".join(line.split())


def source_line(source: str, site: ErrorSite, compiled: str | None = None) -> int | None:
    """The 1-based line of `source` (a model's own file) that the error at `site` comes from,
    or None when the failing text is not the model's (a unit test's input rows, a wrapper).

    A parse error's statement (as Spark echoed it) is aligned with the source line by line,
    whitespace and blank lines ignored: the failing line is the source line it aligns with, or,
    when Jinja rendered it (a `ref`, a macro call), the most similar source line between the
    aligned lines around it. Without the statement, the failing line's text is looked up in the
    source. An analysis error's fragment is looked up in the source lines (the one nearest above
    the reported line first: a wrapped statement only adds lines above the model's SQL), else in
    `compiled`, aligned the same way."""
    raw = source.splitlines()
    if site.text is not None:
        wanted = _norm(site.text)
        if not wanted:
            return None
        if site.statement:
            return _aligned(raw, list(site.statement), site.line - 1)
        matches = [i for i, line in enumerate(raw) if _norm(line) == wanted]
        if not matches:
            return None
        return min(matches, key=lambda i: abs(i - (site.line - 1))) + 1
    if site.fragment:
        fragment = site.fragment.strip(". ")
        if not fragment:
            return None
        matches = [i for i, line in enumerate(raw) if fragment in line]
        if matches:
            above = [i for i in matches if i < site.line]
            return (max(above) if above else min(matches)) + 1
        ran = (compiled or "").splitlines()
        hits = [i for i, line in enumerate(ran) if fragment in line]
        if not hits:
            return None
        above = [i for i in hits if i < site.line]
        return _aligned(raw, ran, max(above) if above else min(hits))
    if compiled is not None:
        return _aligned(raw, compiled.splitlines(), site.line - 1)
    return None


def _aligned(raw: list[str], ran: list[str], at: int) -> int | None:
    """The source line (1-based) that line `at` (0-based) of `ran` comes from, by aligning the
    two line by line; None when `at` lies in what the source does not have (a wrapper around
    the model's SQL, a unit test's inputs)."""
    if not 0 <= at < len(ran) or not _norm(ran[at]):
        return None
    # blank lines left out: they would align anything with anything
    raw_at = [i for i, line in enumerate(raw) if _norm(line)]
    ran_at = [j for j, line in enumerate(ran) if _norm(line)]
    target = ran_at.index(at)
    matcher = difflib.SequenceMatcher(
        None, [_norm(raw[i]) for i in raw_at], [_norm(ran[j]) for j in ran_at], autojunk=False
    )
    blocks = [b for b in matcher.get_matching_blocks() if b.size]
    # The model's text must be there: most of its lines aligned.
    if sum(b.size for b in blocks) < max(1, len(raw_at) // 2):
        return None
    for block in blocks:
        if block.b <= target < block.b + block.size:
            return raw_at[block.a + (target - block.b)] + 1
    before = [b for b in blocks if b.b + b.size <= target]
    after = [b for b in blocks if b.b > target]
    if not before or not after:
        return None  # above the model's first line or below its last: not the model's text
    # Between two aligned runs: a source line between them produced it (a rendered ref, a
    # macro's expansion): the only one, else the most similar; when none lies between, the
    # line above rendered to several.
    first, last = before[-1].a + before[-1].size, after[0].a
    if first >= last:
        return raw_at[first - 1] + 1
    if last - first == 1:
        return raw_at[first] + 1
    wanted = _norm(ran[at])
    ratio, best = max(
        (difflib.SequenceMatcher(None, _norm(raw[raw_at[i]]), wanted).ratio(), i)
        for i in range(first, last)
    )
    return raw_at[best] + 1 if ratio >= 0.5 else None


def short_message(message: str) -> str:
    """A dbt or Spark error in one line: without dbt's headings and its unit-test hint, the
    SQL Spark echoes, the plan or JVM trace after it, and Spark's positions in the compiled SQL
    (the caller names the source line instead)."""
    kept = []
    for line in message.splitlines():
        stripped = line.strip()
        if stripped == STATEMENT_HEADER or CONTEXT_HEADER.match(stripped):
            break
        if stripped.startswith(("JVM stacktrace:", "compiled code at", "Traceback")):
            break
        if HEADING.fullmatch(line) or not stripped:
            continue
        kept.append(stripped)
    text = " ".join(kept)
    # an analysis error's plan follows its position ("...; line 3 pos 4;\n'Project ...")
    text = re.split(r"(?<=pos \d);", text, maxsplit=1)[0]
    for pattern in (PARSE_POSITION, ANALYSIS_POSITION):
        text = pattern.sub("", text)
    # the Thrift server wraps Spark's message in Java exception names, which say nothing
    text = THRIFT_WRAPPING.sub("", text)
    text = " ".join(text.split())
    text = REPEATED_CLASS.sub(r"\1", text)
    return text if len(text) <= MAX_MESSAGE else text[: MAX_MESSAGE - 3] + "..."


@dataclass(frozen=True)
class SourceFile:
    """A model's own file: its path in the project and its text."""

    path: str
    text: str
    compiled: str | None = None


@dataclass(frozen=True)
class Failure:
    """A failed node of a dbt invocation, with what is needed to locate its error."""

    resource_type: str  # model, unit_test, test, seed, snapshot, ...
    name: str
    path: str | None  # its file in the project (a unit test's: its YAML)
    message: str
    source: SourceFile | None = None  # a model's file (a unit test's: the model it tests)
    status: str = "error"  # dbt's: error, fail, warn


def located(failure: Failure) -> str:
    """The failure in the user's terms: "path line N: message" and that line when the error
    maps back to a line of the model's file (naming the model when a unit test ran into the
    model's own error), else the node, its file and the message; never the compiled SQL."""
    message, source = failure.message, failure.source
    unit_test = failure.resource_type == "unit_test"
    note = f"(found by unit test {failure.name}, which runs this model's SQL)" if unit_test else ""
    jinja = jinja_location(message)
    if jinja is not None:
        path = jinja[0] or (source.path if source else failure.path) or failure.name
        shown = source if source is not None and source.path == path else None
        return _at(path, jinja[1], short_message(JINJA_LINE.split(message)[0]), shown, note)
    if source is not None:
        site = error_site(message)
        line = source_line(source.text, site, source.compiled) if site else None
        if line is not None:
            text = short_message(UNIT_TEST_HINT.sub("", message))
            column = source_column(source.text, line, site) if site else None
            return _at(source.path, line, text, source, note, column)
    text = short_message(message)
    if failure.status not in ("error", ""):
        text = f"{failure.status}: {text}" if text else failure.status
    name = f"{failure.resource_type.replace('_', ' ')} {failure.name}"
    if failure.path:
        name += f" ({failure.path})"
    if unit_test and source is not None:
        name += f" of {source.path}"
    return f"{name}: {text}"


def _at(
    path: str, line: int, text: str, source: SourceFile | None, note: str, column: int | None = None
) -> str:
    """ "path line N: message", then the line as written (a `^` under the column when known)."""
    said = f"{path} line {line}: {text}"
    lines = source.text.splitlines() if source is not None else []
    if 0 < line <= len(lines) and lines[line - 1].strip():
        gutter = f"    {line} | "
        said += f"\n{gutter}{lines[line - 1].rstrip()}"
        if column is not None:
            said += "\n" + " " * (len(gutter) - 2) + "| " + " " * column + "^"
    return said + (f"\n    {note}" if note else "")


def source_column(source: str, line: int, site: ErrorSite) -> int | None:
    """The 0-based column of a parse error in the source line it maps to, when that line is the
    failing line as Spark ran it (indentation aside); None when Jinja changed it."""
    lines = source.splitlines()
    if site.text is None or site.position is None or not 0 < line <= len(lines):
        return None
    ran, written = site.text, lines[line - 1]
    if ran.strip() != written.strip():
        return None
    column = site.position - (len(ran) - len(ran.lstrip())) + (len(written) - len(written.lstrip()))
    return column if 0 <= column <= len(written) else None


def jinja_location(message: str) -> tuple[str | None, int] | None:
    """A dbt compilation (Jinja) error's file and line in it: dbt reports the template's own
    line ("Compilation Error in model x (path)" ... "line 20"); None for any other error."""
    if "Compilation Error" not in message:
        return None
    line = JINJA_LINE.search(message)
    if line is None:
        return None
    path = None
    for text in message.splitlines():
        heading = HEADING.fullmatch(text)
        if heading and heading.group(4):
            path = heading.group(4)
            break
    return path, int(line.group(1))


def located_error(message: str) -> str:
    """An invocation's own error (a project that does not parse): at its file and line when
    dbt names them, in one line otherwise."""
    jinja = jinja_location(message)
    if jinja is not None and jinja[0]:
        return _at(jinja[0], jinja[1], short_message(JINJA_LINE.split(message)[0]), None, "")
    return short_message(message)


def skipped_line(skipped: Sequence[tuple[str, str]]) -> str | None:
    """dbt's skipped nodes in one line: "14 nodes skipped: 5 models (a, b, ...), 9 tests";
    `skipped` holds (resource type, name) pairs; None when nothing was skipped."""
    if not skipped:
        return None
    kinds: dict[str, list[str]] = {}
    for resource_type, name in skipped:
        kinds.setdefault(resource_type, []).append(name)
    parts = []
    for resource_type in sorted(kinds, key=lambda kind: (kind != "model", kind)):
        names = kinds[resource_type]
        noun = {"test": "data test", "unit_test": "unit test"}.get(resource_type, resource_type)
        noun += "s" if len(names) != 1 else ""
        if resource_type in ("model", "seed", "snapshot"):
            shown = ", ".join(names[:8]) + (", ..." if len(names) > 8 else "")
            parts.append(f"{len(names)} {noun} ({shown})")
        else:
            parts.append(f"{len(names)} {noun}")
    count = len(skipped)
    return f"{count} node{'s' if count != 1 else ''} skipped: {', '.join(parts)}"


def summary(failed: Sequence[Failure], skipped: Sequence[tuple[str, str]]) -> str:
    """Each failure located, then the skipped nodes' line."""
    lines = [located(failure) for failure in failed]
    line = skipped_line(skipped)
    if line:
        lines.append(line)
    return "\n".join(lines) or "no node failed (see dbt's log)"
