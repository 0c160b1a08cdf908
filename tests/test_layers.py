"""The import contracts of pyproject.toml hold: no upward import, no circle.

CI runs ``lint-imports`` too; running it here puts a broken layer in front of
whoever breaks it, in the suite they already run before landing.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

PROJECT = Path(__file__).resolve().parent.parent


def test_import_contracts_are_kept() -> None:
    lint_imports = Path(sys.executable).parent / "lint-imports"
    assert lint_imports.is_file(), "import-linter is missing: pip install -e '.[test]'"
    done = subprocess.run(
        [str(lint_imports), "--no-cache", "--no-logo"],
        cwd=PROJECT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "0 broken" in done.stdout
