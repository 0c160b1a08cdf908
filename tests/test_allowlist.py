from __future__ import annotations

import pytest
import regex

from spillguard.detection.allowlist import has_pragma, path_allowlisted


#: The server's documented forms (its "List of supported pragmas", each "exactly as
#: shown", with a space between the code and either side), and its older spelling.
@pytest.mark.parametrize(
    "line",
    [
        'key = "v"  # pragma: allowlist-secret',
        'key = "v" # pragma: allowlist secret',
        'String k = "v"; // pragma: allowlist-secret not actually a secret',
        "int key = v; /* pragma: allowlist-secret */",
        'Dim key = "v" \' pragma: allowlist-secret',
        "<input value='v' /> <!-- pragma: allowlist-secret -->",
        "select * from t where cred='v'; -- # pragma: allowlist-secret",
        'key = "v"\t# pragma: allowlist-secret',
        "# pragma: allowlist-secret v",
    ],
)
def test_the_servers_documented_pragmas_allowlist_the_line(line: str) -> None:
    assert has_pragma(line)


#: Forms the server does not document: the laptop must not allowlist what the server
#: then rejects.
@pytest.mark.parametrize(
    "line",
    [
        'key = "v"',
        'key = "v"  # allowlist-secret',
        'key = "v"  # pragma: allowlist-secrets',
        'key = "v"  # pragma: allowlist',
        'key = "v pragma: allowlist-secret"',
        "key = 'v'# pragma: allowlist-secret",  # no space before the opener
        'key = "v"  #pragma: allowlist-secret',  # not exactly as shown
        'key = "v"  #  pragma: allowlist-secret',
        'key = "v"  # pragma:allowlist-secret',
        'key = "v"  # Pragma: allowlist-secret',
        "x='pragma: allowlist-secret'",  # a ' inside a string literal
        'x = "v \' pragma: allowlist-secret";',  # the form glued to the closing quote
        "SELECT 'v' -- pragma: allowlist-secret",  # -- is not one of the openers
        "key=v ; pragma: allowlist-secret",
        "int key = v; /* pragma: allowlist-secret",  # the comment is not closed as shown
        "<x>v</x> <!-- pragma: allowlist-secret",
    ],
)
def test_undocumented_forms_do_not_allowlist(line: str) -> None:
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
