"""Golden files: a report compared with tests/golden/NAME, rewritten when asked.

Set SPILLGUARD_UPDATE_GOLDEN=1 to regenerate every golden file from the current
output, then review the diff like any other change.
"""

from __future__ import annotations

import os
from pathlib import Path

GOLDEN_DIR = Path(__file__).resolve().parent.parent / "tests" / "golden"


def assert_golden(name: str, actual: str) -> None:
    path = GOLDEN_DIR / name
    if os.environ.get("SPILLGUARD_UPDATE_GOLDEN"):
        path.write_bytes(actual.encode("utf-8"))
    expected = path.read_bytes().decode("utf-8")  # bytes: CSV's CRLF must survive
    assert actual == expected, f"{name} differs; SPILLGUARD_UPDATE_GOLDEN=1 rewrites it"
