from __future__ import annotations

import pytest
import regex

from spillguard.allowlist import has_pragma, path_allowlisted


@pytest.mark.parametrize(
    "line",
    [
        'key = "v"  # pragma: allowlist-secret',
        'key = "v"  # pragma: allowlist secret',
        'const key = "v"; // pragma: allowlist-secret',
        'key = "v" /* pragma: allowlist-secret */',
        'Dim key = "v" \' pragma: allowlist-secret',
        "<password>v</password> <!-- pragma: allowlist-secret -->",
        "SELECT 'v' -- # pragma: allowlist-secret",
        "SELECT 'v' -- pragma: allowlist-secret",
        "key=v ;pragma: allowlist-secret",
        'key = "v"  #pragma:allowlist-secret',
    ],
)
def test_pragma_in_a_comment_allowlists_the_line(line: str) -> None:
    assert has_pragma(line)


@pytest.mark.parametrize(
    "line",
    [
        'key = "v"',
        'key = "v"  # allowlist-secret',
        'key = "v"  # pragma: allowlist-secrets',
        'key = "v"  # pragma: allowlist',
        'key = "v pragma: allowlist-secret"',
    ],
)
def test_lines_without_the_pragma_in_a_comment_are_judged(line: str) -> None:
    assert not has_pragma(line)


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("tests/fixtures/keys.pem", True),
        ("src/tests/fixtures/keys.pem", False),
        ("config/app.insecure", True),
        ("config/app.insecure.bak", False),
        ("src/app.py", False),
    ],
)
def test_allowlist_paths_match_the_whole_path(path: str, expected: bool) -> None:
    patterns = [regex.compile(r"tests/fixtures/.*"), regex.compile(r"(.*)\.insecure")]
    assert path_allowlisted(path, patterns) is expected
