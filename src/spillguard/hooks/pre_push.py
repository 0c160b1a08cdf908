"""Client pre-push: judge only the commits the remote does not have yet.

git writes one ``<local ref> <local sha> <remote ref> <remote sha>`` line per ref
on the hook's stdin. A deletion (local sha all zeros) sends nothing. The commits
sent are those reachable from the local sha and from none of the refs the remote
has: the remote shas git gives, and, where the remote-tracking refs
(``refs/remotes/NAME/*``) would spare more, the remote's refs as ``git ls-remote``
tells them now. A tracking ref is never taken at its word: anyone can write one
(``git update-ref refs/remotes/origin/x``), and one left from before a force push
names commits the remote no longer has. Under the pre-commit framework, which
reads stdin itself, the range comes from ``PRE_COMMIT_FROM_REF`` and
``PRE_COMMIT_TO_REF`` (or ``PRE_COMMIT_LOCAL_BRANCH`` for a new branch).
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from spillguard import git
from spillguard.configuration.loading import load_config
from spillguard.core.errors import GitError, UsageError
from spillguard.core.models import RefUpdate, is_zero_id
from spillguard.core.values import Frozen, Record, fill, replace
from spillguard.hooks.bypass import bypass_token_in
from spillguard.scanning.run import run_scan

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from typing import TextIO

    from spillguard.configuration.config import Config
    from spillguard.core.models import ScanResult
    from spillguard.sources import Source
    from spillguard.sources.received_cli import CliCommit

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


class _Remote(Frozen):
    """The remote pushed to, as git names it to the hook: its name and URL."""

    __slots__ = ("name", "url")

    name: str | None
    url: str | None

    def __init__(self, name: str | None, url: str | None) -> None:
        fill(self, locals())


def _pushed_source(
    updates: Sequence[RefUpdate], remote: _Remote, config: Config, skipped: _Skipped
) -> Source:
    """The commits the push sends, once, oldest first, each with the remote ref it goes
    to, read by git as history scans read them (SHA-1 and SHA-256 alike); then the
    messages of the annotated tags it sends, and the whole content of every tree or
    blob a pushed ref or tag names."""
    from spillguard.sources.gitcli import git_dir_of
    from spillguard.sources.gitdiff import iter_commits_fast
    from spillguard.sources.received_cli import iter_tagged_objects, pushed_tips

    git_dir = git_dir_of(".")
    commits = [
        commit
        for commit in _unknown_to_remote(git_dir, updates, remote, skipped)
        if not _bypassed(commit.info.id, commit.info.message, config, skipped)
    ]
    yield from iter_commits_fast(
        git_dir,
        [commit.info.id for commit in commits],
        max_size=config.max_file_size,
        refs={commit.info.id: commit.ref for commit in commits if commit.ref is not None},
        parents={commit.info.id: commit.parents for commit in commits},
    )
    tips = pushed_tips(git_dir, updates)
    yield from iter_tagged_objects(git_dir, updates, max_size=config.max_file_size, tips=tips)


def _unknown_to_remote(
    git_dir: str, updates: Sequence[RefUpdate], remote: _Remote, skipped: _Skipped
) -> list[CliCommit]:
    """The pushed commits ``remote`` has under none of its refs.

    The remote shas git gives the hook are the remote's own word. Where the tracking
    refs of ``remote`` would spare commits beyond them, the remote is asked which
    refs it has (one ``git ls-remote``, only then: a push of new commits onto a branch
    it has costs no connection); if it cannot be asked, every commit beyond the remote
    shas is judged, and the notice says why.
    """
    from spillguard.sources.gitcli import remote_tips
    from spillguard.sources.received_cli import received_commits

    known = _commits_here(git_dir, [u.old for u in updates if not is_zero_id(u.old)])
    if remote.name is None or not _spared_by(git_dir, updates, known, remote.name):
        return received_commits(git_dir, updates, known)
    try:
        tips = remote_tips(git_dir, remote.url or _push_url(git_dir, remote.name))
    except GitError as error:
        skipped.notices.append(
            f"could not ask {remote.name} which commits it has ({error}): every commit "
            "beyond the remote's tips git gave is judged"
        )
        return received_commits(git_dir, updates, known)
    return received_commits(git_dir, updates, [*known, *_commits_here(git_dir, list(set(tips)))])


def _push_url(git_dir: str, name: str) -> str:
    """The URL git pushes to for the remote ``name`` (a URL git was given as it is).

    ``git ls-remote`` is given the URL, never the name: with the name, git would run
    the ``remote.NAME.uploadpack`` the repository's configuration sets."""
    from spillguard.sources.gitcli import run_git

    found = run_git(f"--git-dir={git_dir}", "remote", "get-url", "--push", "--", name)
    return name if found is None else found.decode().strip()


def _spared_by(
    git_dir: str, updates: Sequence[RefUpdate], known: Sequence[str], remote: str
) -> bool:
    """Whether the tracking refs of ``remote`` keep commits that ``known`` does not from
    the pushed ones: a commit at the edge of what the push would send without them (a
    parent of one sent, or a pushed tip itself) that ``known`` does not reach.

    Two ``git rev-list``, each bounded by the push: the first lists what would be
    sent and its edge, the second walks from that edge only down to ``known``.
    """
    from spillguard.sources.gitcli import git_output

    tips = [update.new for update in updates if not is_zero_id(update.new)]
    asked = "".join(f"{tip}\n" for tip in tips).encode()
    tracking = f"--remotes={remote}"
    listing = ("rev-list", "--boundary", "--stdin", "--not", *known, tracking, "--")
    listed = git_output(git_dir, *listing, stdin=asked).decode().split()
    sent = {line for line in listed if not line.startswith("-")}
    edge = [line[1:] for line in listed if line.startswith("-")]
    peeled = _commits_here(git_dir, tips)
    edge += [tip for tip in peeled if tip not in sent]
    if not edge:
        return False
    beyond = git_output(git_dir, "rev-list", "-n1", *edge, "--not", *known, "--")
    return bool(beyond.strip())


def _commits_here(git_dir: str, objects: Sequence[str]) -> list[str]:
    """The commits these objects name (peeled) that this clone has: one ``git cat-file``
    for them all, where a git each cost a push milliseconds per ref."""
    from spillguard.sources.gitcli import run_git

    if not objects:
        return []
    asked = "".join(f"{each}^{{commit}}\n" for each in objects).encode()
    where = f"--git-dir={git_dir}"
    listed = run_git(where, "cat-file", "--batch-check=%(objectname)", stdin=asked) or b""
    # A line is the commit's id, or the question and "missing" when the clone lacks it.
    return [line for line in listed.decode().split("\n") if line and " " not in line]


class _Skipped(Record):
    """The notices of a pre-push scan and the commits the bypass token kept from it."""

    __slots__ = ("commits", "notices")

    notices: list[str]
    commits: list[str]

    def __init__(self, notices: list[str], commits: list[str] | None = None) -> None:
        if commits is None:
            commits = []
        self.notices = notices
        self.commits = commits


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
    url: str | None = None,
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
    url = url or environ.get("PRE_COMMIT_REMOTE_URL")
    root: str | None
    try:
        root = git.open_from_environment().workdir
    except GitError:
        if git.object_format(".") != "sha256":
            raise
        root = git.work_tree_root(".")  # libgit2 cannot open SHA-256 repositories
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
    items = _pushed_source(updates, _Remote(remote, url), config, skipped)
    result = run_scan(items, config.ruleset, notices=skipped.notices)
    return replace(result, bypassed=tuple(skipped.commits)), config
