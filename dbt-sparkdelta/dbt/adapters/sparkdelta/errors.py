"""Error texts as a user needs them: Spark's and Delta's messages without the JVM stack and the
query plan, a lost connection or a refused Spark Connect client said as such, with what to do."""

from __future__ import annotations

import re
from typing import Any

from dbt.adapters.sparkdelta import spark_connect

MAX_ERROR_CHARS = 800  # an operation's report line per table


def without_jvm_stack(message: str) -> str:
    """A Spark error as the user needs it: the message, without py4j's preamble and the JVM
    stack trace (dbt-spark passes both through; the full error stays in dbt's debug log)."""
    lines = []
    for line in message.strip().splitlines():
        # Spark Connect appends the server's stack after "JVM stacktrace:".
        if re.match(r"\s*(at [\w$.<>]+\(|\.\.\. \d+ more|JVM stacktrace:)", line):
            break
        lines.append(line)
    text = "\n".join(lines).strip()
    text = re.sub(r"^An error occurred while calling o\d+\.\w+\.\s*:?\s*", "", text)
    text = re.sub(r"^(?:[\w$]+\.)+[\w$]*(?:Exception|Error): ", "", text).strip() or message
    text = without_query_plan(text)
    # A failed write task reports only "Task failed while writing rows"; the reason (a bad
    # value, a constraint) is the innermost "Caused by:" of the JVM stack.
    causes = re.findall(r"^Caused by: (?:[\w$]+\.)+[\w$]*(?:Exception|Error): (.+)$", message, re.M)
    if causes and re.search(r"TASK_WRITE_FAILED|Job aborted|Task failed", text):
        text = f"{text}\nCaused by: {causes[-1].strip()}"
    return text


# PySpark 4.0.1 rebuilds the message of a JVM error from Spark's own list of error classes,
# which lacks Delta's (DELTA_*): building it fails, and what reaches Python is this.
LOST_ERROR_CLASS = "Cannot find main error class"


def jvm_error_message(exc: BaseException, max_depth: int = 12) -> str | None:
    """The JVM's own message of the error behind `exc` (e.g. Delta's DELTA_MERGE_UNRESOLVED_
    EXPRESSION with the column it could not resolve), when PySpark lost it.

    PySpark raises its INTERNAL_ERROR while converting the original py4j error, so the original
    is in the chain of causes and contexts of the exception dbt-spark raises: its JVM exception
    (`java_exception`, or `_origin` of an already converted one) still has the message. None
    when no exception of the chain has a usable one."""
    seen: set[int] = set()
    pending: list[BaseException | None] = [exc]
    while pending and len(seen) < max_depth:
        current = pending.pop(0)
        if current is None or id(current) in seen:
            continue
        seen.add(id(current))
        for attribute in ("java_exception", "_origin"):
            java = getattr(current, attribute, None)
            if java is None:
                continue
            try:
                message = str(java.getMessage() or "")
            except Exception:  # a dead gateway: the caller keeps PySpark's message
                continue
            if message and LOST_ERROR_CLASS not in message:
                return message
        pending += [current.__cause__, current.__context__]
    return None


def without_query_plan(message: str) -> str:
    """Spark appends the logical plan to an analysis error (";\n'Project [...]\n+- ..."):
    dozens of lines that bury the one that names the missing column or table."""
    found = re.search(r";\n'?[A-Z]\w*(?: \[|\s|$)", message)
    return message[: found.start()].rstrip() if found else message


def lost_connection(message: str) -> bool:
    return bool(
        re.search(
            r"TTransportException|Connection lost|Connection refused|Connection reset|"
            r"Broken pipe|timed out|TSocket read 0 bytes|Could not connect",
            message,
            re.I,
        )
    )


# gRPC's words for an endpoint that is gone, and Spark Connect's for a server session that no
# longer exists because the endpoint restarted.
_CONNECT_LOST = re.compile(
    r"StatusCode\.UNAVAILABLE|failed to connect to all addresses|Socket closed|RETRIES_EXCEEDED|"
    r"INVALID_HANDLE\.SESSION_(?:CHANGED|NOT_FOUND|CLOSED)",
    re.I,
)


def connect_error_message(message: str, url: str, token_set: bool) -> str:
    """A Spark Connect failure as the user needs it: refused for its token, or a lost endpoint
    (naming the URL and what to do); other errors unchanged."""
    if re.search(r"UNAUTHENTICATED|authentication token", message, re.I):
        given = "an invalid" if token_set else "no"
        return (
            f"The Spark Connect endpoint {url} refused the client: it sent {given} token "
            f"({_first_line(message)}). Set the profile's `token` (from an environment variable, "
            "e.g. `{{ env_var('SPARK_CONNECT_TOKEN') }}`) to the endpoint's "
            "spark.connect.authenticate.token."
        )
    if _CONNECT_LOST.search(message) or lost_connection(message):
        return (
            f"Lost the connection to the Spark Connect endpoint {url} (stopped, restarted or "
            "not reachable); the statement may not have run, and the endpoint's session state "
            "(temporary views, settings) is gone. Check that the endpoint is up and "
            f"rerun. Cause: {_first_line(message)}"
        )
    return message


def open_error_message(message: str, credentials: Any, url: str) -> str:
    """Why a Spark Connect session could not be opened, and what to do."""
    shown = spark_connect.redact(url)
    explained = connect_error_message(message, shown, bool(credentials.token))
    if explained.startswith("The Spark Connect endpoint"):  # refused for its token
        return explained
    if explained.startswith("Lost the connection"):
        text = (
            f"Could not reach the Spark Connect endpoint {shown} within "
            f"connect_timeout={credentials.connect_timeout}s: is it running "
            f"and is the URL right? Cause: {_first_line(message)}"
        )
        if credentials.token and spark_connect.url_host(url) != "localhost":
            text += (
                " With a token, PySpark speaks TLS to every host but `localhost`: put a TLS "
                "proxy in front of the endpoint, or use host `localhost` on its machine."
            )
        return text
    return f"Could not open a Spark Connect session on {shown}: {explained}"


def _first_line(message: str) -> str:
    details = re.search(r'details = "([^"]+)"', message)
    if details:
        return details.group(1)
    return next((line.strip() for line in message.splitlines() if line.strip()), message)


def short_error_message(message: str) -> str:
    """The useful sentence of a Spark error, without the Thrift or JVM stack around it."""
    found = re.search(
        r"Error running query: (?:[\w.$]+(?:Exception|Error): )?(.+?)(?::\d+:\d+'|$)", message, re.S
    )
    text = found.group(1) if found else message
    # "[CODE] org.x.AnalysisException: [CODE] text" -> "[CODE] text"
    text = re.sub(r"\[[A-Z0-9_.]+\] (?=[\w.$]+(?:Exception|Error): )", "", text)
    text = re.sub(r"[\w.$]+(?:Exception|Error): ", "", text)
    text = without_query_plan(text.replace("\\n", "\n"))
    text = re.sub(r"\s+", " ", text).strip()
    if len(text) <= MAX_ERROR_CHARS:
        return text
    # Cut at a word, and say that it was cut; dbt's debug log has the whole message.
    return text[:MAX_ERROR_CHARS].rsplit(" ", 1)[0] + " [...]"
