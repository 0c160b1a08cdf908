"""Client pre-push: judge only the commits the remote does not have yet.

git writes one ``<local ref> <local sha> <remote ref> <remote sha>`` line per ref
on the hook's stdin. A deletion (local sha all zeros) sends nothing. The commits
sent are those reachable from the local sha and from none of: the remote sha, and
the remote-tracking refs of that remote (``refs/remotes/NAME/*``), so a new
branch sends only what the remote lacks. Under the pre-commit framework, which
reads stdin itself, the range comes from ``PRE_COMMIT_FROM_REF`` and
``PRE_COMMIT_TO_REF`` (or ``PRE_COMMIT_LOCAL_BRANCH`` for a new branch).
"""

from __future__ import annotations

import dataclasses
import os
from typing import TYPE_CHECKING

import pygit2
from pygit2.enums import SortMode

from spillguard import git
from spillguard.configuration.loading import load_config
from spillguard.core.errors import GitError, UsageError
from spillguard.core.models import RefUpdate
from spillguard.hooks.bypass import bypass_token_in
from spillguard.scanning.run import run_scan
from spillguard.sources.commits import iter_walked_commit
from spillguard.sources.messages import tag_messages
from spillguard.sources.received import tag_messages_of

if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator, Mapping, Sequence
    from typing import TextIO

    from spillguard.configuration.config import Config
    from spillguard.core.models import ScanResult
    from spillguard.sources import Source

ADVICE = (
    "spillguard: push blocked by {count} blocking finding(s) in the commits being pushed.",
    "  a real secret stays in history until the commit is rewritten: remove it with",
    "  git commit --amend or git rebase -i, rotate the secret, then push again;",
    "  a false positive: add 'pragma: allowlist-secret' in a comment on that line;",
    "  to push anyway (not recommended): git push --no-verify",
)
ZERO = "0" * 40


def parse_push_lines(text: str) -> tuple[RefUpdate, ...]:
    """git's pre-push stdin as updates of the remote refs: (remote sha, local sha, remote ref)."""
    updates = []
    for line in text.splitlines():
        if not line.strip():
            continue
        parts = line.split()
        if len(parts) != 4:
            raise UsageError(
                f"pre-push: expected '<local ref> <sha> <remote ref> <sha>', got {line!r}"
            )
        _, local_sha, remote_ref, remote_sha = parts
        updates.append(RefUpdate(old=remote_sha, new=local_sha, ref=remote_ref))
    return tuple(updates)


def framework_updates(environ: Mapping[str, str]) -> tuple[RefUpdate, ...] | None:
    """The push range the pre-commit framework passes, or None outside it."""
    to_ref = environ.get("PRE_COMMIT_TO_REF")
    ref = environ.get("PRE_COMMIT_REMOTE_BRANCH", "")
    if to_ref:
        return (RefUpdate(old=environ.get("PRE_COMMIT_FROM_REF") or ZERO, new=to_ref, ref=ref),)
    local = environ.get("PRE_COMMIT_LOCAL_BRANCH")
    if local:  # a new branch whose history reaches a root commit
        return (RefUpdate(old=ZERO, new=local, ref=ref),)
    return None


def pushed_commits(
    repo: pygit2.Repository, updates: Iterable[RefUpdate], remote: str | None
) -> Iterator[tuple[pygit2.Commit, str]]:
    """Each commit the push sends, once, oldest first, with the remote ref it goes to."""
    known = list(_remote_tips(repo, remote))
    known.extend(
        git.resolve_commit(repo, u.old).id
        for u in updates
        if not git.is_zero_id(u.old) and _exists(repo, u.old)
    )
    seen: set[pygit2.Oid] = set()
    for update in updates:
        if git.is_zero_id(update.new):
            continue  # a deletion sends no commit
        walker = repo.walk(
            git.resolve_commit(repo, update.new).id, SortMode.TOPOLOGICAL | SortMode.REVERSE
        )
        for oid in known:
            walker.hide(oid)
        for commit in walker:
            if commit.id not in seen:
                seen.add(commit.id)
                yield commit, update.ref


def _exists(repo: pygit2.Repository, rev: str) -> bool:
    # The remote may hold commits this clone never fetched (before a force push).
    try:
        return repo.get(rev) is not None
    except ValueError:
        return False


def _remote_tips(repo: pygit2.Repository, remote: str | None) -> Iterator[pygit2.Oid]:
    if not remote:
        return
    prefix = f"refs/remotes/{remote}/"
    for name in repo.references:
        if name.startswith(prefix):
            target = repo.references[name].peel()
            if isinstance(target, pygit2.Commit):
                yield target.id


def _pushed_source(
    repo: pygit2.Repository,
    updates: Iterable[RefUpdate],
    remote: str | None,
    config: Config,
    skipped: _Skipped,
) -> Source:
    for commit, ref in pushed_commits(repo, updates, remote):
        if _bypassed(
            str(commit.id), commit.raw_message.decode("utf-8", "replace"), config, skipped
        ):
            continue
        yield from iter_walked_commit(repo, commit, max_size=config.max_file_size, ref=ref)
    yield from tag_messages_of(repo, _pushed_tags(repo, updates))


def _pushed_tags(
    repo: pygit2.Repository, updates: Iterable[RefUpdate]
) -> Iterator[tuple[pygit2.Tag, str]]:
    """Every annotated tag the push sends (and each tag a tag names), with its ref.
    The pre-commit framework names the pushed side by ref, not by id."""
    for update in updates:
        target = None if git.is_zero_id(update.new) else _named_object(repo, update.new)
        while isinstance(target, pygit2.Tag):
            yield target, update.ref
            target = target.get_object()


def _named_object(repo: pygit2.Repository, rev: str) -> pygit2.Object | None:
    """The object ``rev`` names; None when it names none (the walk reports it)."""
    try:
        return repo.revparse_single(rev)
    except (KeyError, ValueError, pygit2.GitError, pygit2.InvalidSpecError):
        return None


def _pushed_source_cli(
    updates: Sequence[RefUpdate], remote: str | None, config: Config, skipped: _Skipped
) -> Source:
    """``_pushed_source`` by git alone, for SHA-256 repositories."""
    from spillguard.sources.gitcli import git_dir_of, run_git
    from spillguard.sources.received_cli import iter_received, received_commits

    git_dir = git_dir_of(".")
    # What the remote has: its tracking refs, and each remote sha this clone knows.
    known = [f"--remotes={remote}"] if remote else []
    known.extend(
        update.old
        for update in updates
        if not git.is_zero_id(update.old)
        and run_git(f"--git-dir={git_dir}", "cat-file", "-e", f"{update.old}^{{commit}}")
        is not None
    )
    commits = [
        commit
        for commit in received_commits(git_dir, updates, known)
        if not _bypassed(commit.info.id, commit.info.message, config, skipped)
    ]
    yield from iter_received(git_dir, commits, max_size=config.max_file_size)
    pushed = [(update.new, update.ref) for update in updates if not git.is_zero_id(update.new)]
    yield from tag_messages(git_dir, pushed)


@dataclasses.dataclass(slots=True)
class _Skipped:
    """The notices of a pre-push scan and the commits the bypass token kept from it."""

    notices: list[str]
    commits: list[str] = dataclasses.field(default_factory=list)


def _bypassed(commit: str, message: str, config: Config, skipped: _Skipped) -> bool:
    token = bypass_token_in(message, config.bypass_tokens)
    if token is None:
        return False
    skipped.notices.append(f"skipped commit {commit[:10]}: its message contains {token!r}")
    skipped.commits.append(commit)
    return True


def run_pre_push(  # noqa: PLR0913 - keyword-only options of one call
    *,
    remote: str | None,
    stdin: TextIO,
    config_path: str | None,
    include_allowlisted: bool,
    offline: bool = False,
    config_from: str | None = None,
) -> tuple[ScanResult, Config]:
    environ = os.environ
    updates = framework_updates(environ)
    if updates is None:
        if stdin.isatty():
            raise UsageError("hook pre-push reads git's pre-push lines on stdin; git runs it")
        updates = parse_push_lines(stdin.read())
    remote = remote or environ.get("PRE_COMMIT_REMOTE_NAME")
    repo: pygit2.Repository | None
    root: str | None
    try:
        repo = git.open_from_environment()
        root = repo.workdir
    except GitError:
        if git.object_format(".") != "sha256":
            raise
        # libgit2 cannot open SHA-256 repositories: git alone reads the push.
        repo, root = None, git.work_tree_root(".")
    config = load_config(
        root=root,
        config_path=config_path,
        include_allowlisted=include_allowlisted,
        offline=offline,
        config_from=config_from,
        # As the server judges the push: by the remote's default branch, not by the
        # configuration the pushed commits carry.
        pushing_to=remote or "origin",
    )
    # Filled while the scan runs: run_scan reads notices once the items are consumed.
    skipped = _Skipped(notices=list(config.notices))
    if repo is None:
        items = _pushed_source_cli(updates, remote, config, skipped)
    else:
        items = _pushed_source(repo, updates, remote, config, skipped)
    result = run_scan(items, config.ruleset, notices=skipped.notices)
    return dataclasses.replace(result, bypassed=tuple(skipped.commits)), config
