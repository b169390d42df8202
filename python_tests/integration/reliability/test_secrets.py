"""Secrets: no committed file holds a credential; profiles.yml reads every connection value
from the environment."""

from __future__ import annotations

import re
import subprocess

from python_tests.conftest import PROJECT_DIR, RELIABILITY

SECRET_PATTERNS = {
    "private key": r"-----BEGIN [A-Z ]*PRIVATE KEY-----",
    "AWS access key": r"\bAKIA[0-9A-Z]{16}\b",
    "GitHub token": r"\bgh[pousr]_[A-Za-z0-9]{30,}\b",
    "Slack token": r"\bxox[abpr]-[A-Za-z0-9-]{10,}",
    "JWT": r"\beyJ[A-Za-z0-9_-]{10,}\.eyJ[A-Za-z0-9_-]{10,}\.",
    "assigned secret": (
        # a literal: `key: value` (YAML, config) or `key="value"` (code; `key=variable` is not one)
        r"(?i)\b(password|passwd|secret|token|api_key|apikey|access_key)\b"
        r"(?::[ \t]*['\"]?|[ \t]*=[ \t]*['\"])"
        r"(?!\{\{|\$\{|env_var|os\.environ|none\b|null\b|<)[A-Za-z0-9+/_\-]{8,}"
    ),
}


def test_no_credentials_in_committed_files():
    files = subprocess.run(
        ["git", "ls-files"], cwd=PROJECT_DIR, capture_output=True, text=True, check=True
    ).stdout.split()
    found = []
    for name in files:
        path = PROJECT_DIR / name
        if not path.is_file() or path.stat().st_size > 2_000_000:
            continue
        text = path.read_text(errors="ignore")
        for what, pattern in SECRET_PATTERNS.items():
            for match in re.finditer(pattern, text):
                found.append(f"{name}: {what}: {match.group(0)[:40]}")
    assert not found, found
    profiles = (PROJECT_DIR / "profiles.yml").read_text()
    for key in ("host", "port", "user", "auth", "password", "token", "schema"):
        for line in re.findall(rf"^\s+{key}:.*$", profiles, re.M):
            assert "env_var(" in line, f"profiles.yml: {line.strip()} is not from the environment"
    RELIABILITY["committed files scanned for credentials"] += len(files)
