"""What ``review add --at`` and ``--fingerprint`` review: a finding, found again by rescanning.

A user has a report in hand, not the secret: the report names the finding by its
location (``path:line`` in the staged changes or a file, ``commit:path:line`` in
history) and by its fingerprint. The finding is found again by scanning where it
was (the staged changes, then the file in the work tree; one commit; or, for a
fingerprint, every place in turn), and what gets reviewed is its secret value, for
every rule unless ``--rule`` narrows it: the generic rules find most values a
provider's rule finds, and must not report the line again.
"""

from __future__ import annotations

import contextlib
import os
import re
from pathlib import Path
from typing import TYPE_CHECKING

from spillguard.core import gitcommand
from spillguard.core.errors import UsageError

if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator

    from spillguard.configuration.config import Config
    from spillguard.core.models import Finding

_COMMIT = re.compile(r"[0-9a-fA-F]{7,64}")
_FINGERPRINT = re.compile(r"[0-9a-f]{64}")


def secret_of(finding: Finding) -> str:
    """The value the finding's rule judged (its secret group, unquoted), else the match.

    The secret group may lie past the match, in a lookahead (a plist's ``<string>``
    after its ``<key>``): it is read from the line, where the report shows it.
    """
    from spillguard.detection.redact import unquoted

    text, base = finding.text, finding.line_offset_start
    if finding.truncated:  # the line is the match alone
        text, base = finding.match_text, 0
    start, end = base + finding.secret_start, base + finding.secret_end
    if finding.secret_end < 0 or end > len(text):
        return finding.match_text
    start, end = unquoted(text, start, end)
    return text[start:end]


def find_at(at: str, *, root: str, config: Config, config_path: str | None) -> Finding:
    """The finding at ``path:line`` (staged, else the file) or ``commit:path:line``."""
    location, _, number = at.rpartition(":")
    if not location or not number.isdigit() or int(number) < 1:
        raise UsageError(f"--at {at}: expected PATH:LINE or COMMIT:PATH:LINE")
    line = int(number)
    head, _, rest = location.partition(":")
    commit = _commit_id(root, head) if rest and _COMMIT.fullmatch(head) else None
    if commit is not None:
        places = _commit_findings(root, commit, config)
        path = rest
    else:
        path = location
        places = _staged_then_file(root, path, config, config_path)
    for finding in places:
        if finding.path == path and finding.line == line and not finding.allowlisted:
            return finding
    if rest and _COMMIT.fullmatch(head) and commit is None:
        raise UsageError(_no_commit(at, head))
    raise UsageError(f"--at {at}: no finding there (already reviewed, or the line moved?)")


def _no_commit(at: str, commit: str) -> str:
    """Why a commit named by a report is not here, and what reviews its finding instead:
    a push that a pre-receive hook rejected leaves no object behind on the server."""
    return (
        f"--at {at}: this repository has no commit {commit} (a push the server rejected "
        "is not kept, and a commit not fetched here is not known): run the command in a "
        "clone that has the commit (the pusher's), or review the text itself with "
        "'spillguard review add - --rule RULE'"
    )


def find_fingerprint(
    fingerprint: str, *, root: str, config: Config, config_path: str | None
) -> Finding:
    """The finding with this fingerprint: in the staged changes, history, or the files."""
    wanted = fingerprint.lower()
    if not _FINGERPRINT.fullmatch(wanted):
        raise UsageError(f"--fingerprint {fingerprint}: expected 64 hexadecimal digits")
    for finding in _everywhere(root, config, config_path):
        if finding.fingerprint == wanted:
            return finding
    raise UsageError(
        f"--fingerprint {fingerprint}: no finding has it in the staged changes, "
        "the history or the files (already reviewed?)"
    )


def _everywhere(root: str, config: Config, config_path: str | None) -> Iterator[Finding]:
    """Every finding, scanned place by place only as far as the caller looks."""
    yield from _staged(root, config_path)
    yield from _history(root, config)
    yield from _scan(root, config, files=(root,))


def _commit_id(root: str, rev: str) -> str | None:
    command = gitcommand.command("-C", root, "rev-parse", "--verify", "-q", f"{rev}^{{commit}}")
    return gitcommand.run(command).stdout.decode().strip() or None


def _staged_then_file(
    root: str, path: str, config: Config, config_path: str | None
) -> Iterator[Finding]:
    yield from _staged(root, config_path)
    if Path(root, path).is_file():
        yield from _scan(root, config, files=(str(Path(root, path)),))


def _staged(root: str, config_path: str | None) -> Iterable[Finding]:
    """The staged changes' findings, judged as the commit hook judges them."""
    if not Path(root, ".git").exists():
        return ()
    from spillguard.hooks.pre_commit import run_pre_commit

    with _working_directory(root):  # the staged sources read the repository here
        result, _ = run_pre_commit(config_path=config_path, include_allowlisted=False)
    return result.findings


def _commit_findings(root: str, commit: str, config: Config) -> Iterable[Finding]:
    return _scan(root, config, revs=(f"{commit}^!",))


def _history(root: str, config: Config) -> Iterable[Finding]:
    if _commit_id(root, "HEAD") is None:
        return ()
    return _scan(root, config, all_refs=True)


def _scan(
    root: str,
    config: Config,
    *,
    revs: tuple[str, ...] = (),
    files: tuple[str, ...] = (),
    all_refs: bool = False,
) -> Iterable[Finding]:
    from spillguard.commands.options import CommonOptions, ScanOptions
    from spillguard.commands.scan import scan_for

    options = ScanOptions(
        common=CommonOptions(), repo=root, revs=revs, files=files, all_refs=all_refs
    )
    return scan_for(options, config, root).findings


@contextlib.contextmanager
def _working_directory(path: str) -> Iterator[None]:
    previous = Path.cwd()
    os.chdir(path)
    try:
        yield
    finally:
        os.chdir(previous)
