"""Generated sections of README.md: the text between a start and an end marker."""

from __future__ import annotations


def replace_section(readme: str, start: str, end: str, body: str) -> str:
    """`readme` with the text between the `start` and `end` markers replaced by `body`."""
    if start not in readme or end not in readme:
        raise ValueError(f"README.md lacks the markers {start} and {end}")
    head, rest = readme.split(start, 1)
    _, tail = rest.split(end, 1)
    return f"{head}{start}\n{body}\n{end}{tail}"
