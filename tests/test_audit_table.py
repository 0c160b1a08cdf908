"""The audit's text table: drawn without rich where it can be, always as rich draws it."""

from __future__ import annotations

import io
from typing import Any

import pytest

from spillguard.audit.table import COLUMNS, HEADINGS, write_table
from spillguard.report.sanitize import clean


def _tree(*names: str) -> dict[str, Any]:
    """A status tree of one project, a repository per name, each with a main branch."""
    branch = {"name": "main", "state": "vulnerable", "findings": 2, "blocking": 1,
              "lastCommit": "0123456789abcdef", "scannedAt": "2026-12-02T06:22:33Z",
              "byRule": {"AWS_SECRET_ACCESS_KEY": 1, "GENERIC_PASSWORD": 1}}  # fmt: skip
    repositories = [{"name": name, "state": "vulnerable", "error": None, "branches": [branch]}
                    for name in names]  # fmt: skip
    repositories.append({"name": "broken", "state": "failed", "error": "unreadable: x",
                         "branches": []})  # fmt: skip
    summary = {"repositories": len(names) + 1, "failed": 1, "branches": len(names),
               "commits": 3, "findings": 2, "blocking": 1}  # fmt: skip
    return {"projects": [{"name": "team", "repositories": repositories}], "summary": summary}


def _as_rich_draws_it(tree: dict[str, Any]) -> str:
    """The table as spillguard drew it with rich alone, before it drew plain tables."""
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    from spillguard.audit.status import rows

    table = Table(*HEADINGS)
    for row in rows(tree):
        table.add_row(*(Text(clean(str(row[column]))) for column in COLUMNS))
    stream = io.StringIO()
    Console(file=stream, no_color=True, width=200).print(table)
    return stream.getvalue()


@pytest.mark.parametrize(
    "names",
    [
        ("app", "lib"),
        (),  # no branch at all: the heading and the failed repository
        ("ünïcode", "漢字"),  # wide characters: rich measures them
        ("x" * 150,),  # wider than the page: rich folds the cells
        ("tab\there", "esc\x1b[31m"),  # shown as escapes, never sent
    ],
)
def test_the_table_is_the_one_rich_draws(names: tuple[str, ...], monkeypatch) -> None:
    monkeypatch.delenv("FORCE_COLOR", raising=False)
    tree = _tree(*names)
    stream = io.StringIO()
    write_table(tree, stream, color=False)
    table, _, summary = stream.getvalue().removesuffix("\n").rpartition("\n")
    assert f"{table}\n" == _as_rich_draws_it(tree)
    assert summary == (f"{len(names) + 1} repositories (1 failed), {len(names)} branches, "
                       "3 commits judged in this run, 2 findings, 1 blocking")  # fmt: skip
