"""``spillguard review add|remove|list``: the reviewed strings of a repository.

The strings themselves are never written anywhere: the file keeps salted digests.
``TEXT`` may be ``-`` to read it from stdin, which keeps it out of shell history.
"""

from __future__ import annotations

import datetime as dt
import difflib
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from spillguard.configuration import reviewed
from spillguard.configuration.config import read_text_file
from spillguard.configuration.loading import load_config
from spillguard.core.atomic import write_text_atomic
from spillguard.core.errors import ExitCode, UsageError
from spillguard.report.sanitize import clean_name

if TYPE_CHECKING:
    from typing import TextIO

    from spillguard.commands.setup_options import ReviewOptions
    from spillguard.configuration.config import Config


def run_review_command(options: ReviewOptions, *, stdin: TextIO | None = None) -> int:
    root = _root(options.repo)
    path = _reviewed_path(root)
    current = _read(path)
    if options.action == "list":
        from spillguard.core.output import open_output

        with open_output(options.output) as stream:
            _list(current, options.format, stream)
        return ExitCode.CLEAN
    config = _config(options, root)
    if options.remote:
        return _remote(options, config, root, stdin or sys.stdin)
    if options.action == "add":
        text, rule, found = _what_to_add(options, config, root, stdin or sys.stdin)
        record = _record(options, config, current, text, root, rule)
        write_text_atomic(path, reviewed.render_reviewed(reviewed.with_record(current, record)))
        print(f"spillguard: reviewed {found}{_describe(rule)} added to {path}", file=sys.stderr)
        if Path(root, ".git").exists():
            # The commit hook reads the staged file: unstaged, the entry does not count yet.
            print(
                f"spillguard: stage it for the commit hook: git add :/{reviewed.REVIEWED_FILE}",
                file=sys.stderr,
            )
        return ExitCode.CLEAN
    digest = _digest_to_remove(options, current, stdin or sys.stdin)
    updated, removed = reviewed.without(current, digest, options.rule)
    if not removed:
        raise UsageError(f"{path}: no reviewed entry matches {_describe(options.rule)}")
    write_text_atomic(path, reviewed.render_reviewed(updated))
    print(f"spillguard: {removed} reviewed entry(ies) removed from {path}", file=sys.stderr)
    return ExitCode.CLEAN


def _what_to_add(
    options: ReviewOptions, config: Config, root: str, stdin: TextIO
) -> tuple[str, str | None, str]:
    """The text to review, its rule and how to describe where it was found: TEXT as
    given, or the secret of the finding ``--at`` or ``--fingerprint`` names."""
    given = [flag for flag in (options.text, options.at, options.fingerprint) if flag is not None]
    if len(given) != 1:
        raise UsageError("give one of TEXT (- for stdin), --at PATH:LINE or --fingerprint FP")
    if options.text is not None:
        return _text(options.text, stdin), options.rule, ""
    from spillguard.commands.review_target import find_at, find_fingerprint, secret_of

    if options.at is not None:
        finding = find_at(options.at, root=root, config=config, config_path=options.config)
    else:
        fingerprint = options.fingerprint or ""
        finding = find_fingerprint(
            fingerprint, root=root, config=config, config_path=options.config
        )
    if options.rule is not None and options.rule != finding.rule:
        raise UsageError(f"--rule {options.rule}: the finding is one of {finding.rule}")
    where = f"{finding.path}:{finding.line}"
    if finding.commit is not None:
        where = f"{finding.commit.id[:10]}:{where}"
    # The value is reviewed for every rule that finds it (a generic rule finds most
    # values a provider's rule finds), unless --rule narrows it: one review, not one
    # per rule, clears a line, as one fingerprint clears a finding in gitleaks.
    found = f"the {finding.rule} secret found at {clean_name(where)}: "
    return secret_of(finding), options.rule, found


def _remote(options: ReviewOptions, config: Config, root: str, stdin: TextIO) -> int:
    """``--remote``: the reviewed-line create or delete operation on the server."""
    from spillguard.sync.review import remote_review

    if options.digest is not None:
        raise UsageError("--remote needs the TEXT: the server knows strings, not digests")
    # The rule is not checked against the local rules: the server judges its own names.
    if options.action == "add":
        text, rule, _ = _what_to_add(options, config, root, stdin)
    else:
        text, rule = _text(options.text, stdin), options.rule
    done = remote_review(
        add=options.action == "add",
        text=text,
        rule=rule,
        root=root,
        configured=config.sync,
    )
    print(f"spillguard: {done}", file=sys.stderr)
    return ExitCode.CLEAN


def _config(options: ReviewOptions, root: str) -> Config:
    """The rules a review names: a bare repository's are its pushes' (the server's)."""
    from spillguard.configuration.loading import is_bare_directory, load_bare_config

    if is_bare_directory(root):
        return load_bare_config(root, options.config)
    return load_config(root=root, config_path=options.config, reviewed=False)


def _reviewed_path(root: str) -> Path:
    """The repository's ``.spillguard-reviewed.toml``; in a bare repository (a server's),
    the administrator's ``spillguard-reviewed.toml``, which every push is judged with."""
    from spillguard.configuration.loading import SERVER_REVIEWED_FILE, is_bare_directory

    if is_bare_directory(root):
        return Path(root, SERVER_REVIEWED_FILE)
    return Path(root, reviewed.REVIEWED_FILE)


def _root(repo: str) -> str:
    """The work tree's top, so a review made in a subdirectory lands in the right file."""
    if not Path(repo).is_dir():
        raise UsageError(f"--repo {repo}: not a directory")
    from spillguard.git import work_tree_root

    return work_tree_root(repo) or repo


def _read(path: Path) -> reviewed.ReviewedFile:
    if not path.exists():
        return reviewed.new_file(str(path))
    return reviewed.parse_reviewed(read_text_file(path), str(path))


def _text(given: str | None, stdin: TextIO) -> str:
    if given is None:
        raise UsageError("give the reviewed TEXT, or - to read it from stdin")
    text = given
    if given == "-":
        text = stdin.read()
        text = text.removesuffix("\n").removesuffix("\r")
    if not text:
        raise UsageError("the reviewed text is empty")
    if "\n" in text or "\r" in text:
        raise UsageError("the reviewed text spans lines; a finding never does")
    return text


def _record(  # noqa: PLR0913, PLR0917 - the entry's parts, each from its own place
    options: ReviewOptions,
    config: Config,
    current: reviewed.ReviewedFile,
    text: str,
    root: str,
    rule: str | None,
) -> reviewed.Record:
    _check_rule(rule, config)
    reason = options.reason.strip()
    if not reason.isprintable():
        raise UsageError("--reason must be one line of printable text")
    if config.require_review_reason and not reason:
        source = dict(config.origins).get("require_review_reason", "the configuration")
        raise UsageError(f"a reason is required (require_review_reason in {source}): --reason WHY")
    from spillguard.git import user_identity

    return reviewed.Record(
        digest=reviewed.digest_of(current, text),
        rule=rule,
        reason=reason,
        added_by=user_identity(root, os.environ),
        date=dt.datetime.now(dt.timezone.utc).date().isoformat(),
    )


def _check_rule(rule: str | None, config: Config) -> None:
    names = [known.name for known in config.ruleset.rules]
    if rule is None or rule in names:
        return
    close = difflib.get_close_matches(rule, names, n=1)
    hint = f" (did you mean {close[0]}?)" if close else ""
    raise UsageError(f"--rule {rule}: no such rule{hint}; see spillguard rules")


def _digest_to_remove(options: ReviewOptions, current: reviewed.ReviewedFile, stdin: TextIO) -> str:
    if options.digest is None:
        return reviewed.digest_of(current, _text(options.text, stdin))
    prefix = options.digest.lower()
    found = {record.digest for record in current.records if record.digest.startswith(prefix)}
    if len(prefix) < 8 or len(found) > 1:
        raise UsageError(f"--digest {options.digest}: give at least 8 digits of one entry")
    if not found:
        raise UsageError(f"--digest {options.digest}: no reviewed entry has this digest")
    return found.pop()


def _describe(rule: str | None) -> str:
    return f"entry for rule {rule}" if rule else "entry (every rule)"


def _list(current: reviewed.ReviewedFile, form: str, stream: TextIO) -> None:
    if form == "json":
        import json

        rows = [
            {
                "digest": record.digest,
                "rule": record.rule,
                "reason": record.reason,
                "added_by": record.added_by,
                "date": record.date,
            }
            for record in current.records
        ]
        json.dump({"file": current.source, "reviewed": rows}, stream, indent=2)
        stream.write("\n")
        return
    if form == "csv":
        from spillguard.report.csv_report import write_reviewed_csv

        write_reviewed_csv(current.records, stream)
        return
    from spillguard.report.sanitize import clean

    if not current.records:
        print(f"spillguard: no reviewed entries in {current.source}", file=sys.stderr)
    for record in current.records:
        fields = (record.digest[:12], record.rule or "*", record.date, record.added_by)
        line = "  ".join(fields) + (f"  {record.reason}" if record.reason else "")
        stream.write(clean(line) + "\n")
