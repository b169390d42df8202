"""Generated sections of a page (docs/interop.md): the text between a start and an end marker."""

from __future__ import annotations


def replace_section(page: str, start: str, end: str, body: str) -> str:
    """`page` with the text between the `start` and `end` markers replaced by `body`."""
    if start not in page or end not in page:
        raise ValueError(f"the page lacks the markers {start} and {end}")
    head, rest = page.split(start, 1)
    _, tail = rest.split(end, 1)
    return f"{head}{start}\n{body}\n{end}{tail}"
