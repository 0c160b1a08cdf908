"""The commits a push brings, listed by git, and one commit read by git on its own.

``git rev-list NEW --not --all`` names the new commits of a push (pre-push, and
pre-receive in SHA-256 repositories; the quarantined objects are visible to git,
which inherits the hook's environment), ``git log`` their authors and messages.
``iter_commit`` reads a commit that ``sources.gitdiff`` cannot settle from one
reading of its diff: diffed against its parents as ``sources.staged_cli`` diffs the
index, renames against the first parent, and a merge adds only the lines no parent
had.
"""

from __future__ import annotations

from pathlib import Path

from spillguard.core.decode import judged_as, skipped, unread_reason
from spillguard.core.errors import GitError
from spillguard.core.models import CommitInfo, CommitWalked, Fragment, Skipped, is_zero_id
from spillguard.core.values import Frozen, fill, replace
from spillguard.sources.diffparse import commit_info_from, seconds
from spillguard.sources.gitcli import git_output
from spillguard.sources.messages import commit_message, tag_messages
from spillguard.sources.staged_cli import empty_tree_id, read_tree_change

TYPE_CHECKING = False  # typing's, without importing typing (a hook's start-up); mypy reads it alike
if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator, Sequence

    from spillguard.core.models import RefUpdate
    from spillguard.sources import Source, SourceItem
    from spillguard.sources.diffparse import CommitDiff

_FIELDS = "%H%x00%T%x00%P%x00%an%x00%ae%x00%at%x00%cn <%ce>%x00%B%x00%x01"
#: ``git log`` of commits' details, whatever the user's configuration adds to a log.
_LOG = ("--no-replace-objects", "log", "--no-show-signature", f"--format={_FIELDS}")
#: Commits in the order a push's are judged: no commit before its parents.
_ORDER = ("--no-replace-objects", "rev-list", "--topo-order", "--reverse")


class CliCommit(Frozen):
    __slots__ = ("info", "parents", "ref", "tree")

    info: CommitInfo
    tree: str
    parents: tuple[str, ...]
    #: The first ref of the push (in git's order) that brings the commit; None in history scans.
    ref: str | None

    def __init__(
        self,
        *,
        info: CommitInfo,
        tree: str,
        parents: tuple[str, ...],
        ref: str | None,
    ) -> None:
        fill(self, locals())


def received_commits(
    git_dir: str, updates: Iterable[RefUpdate], known: Sequence[str] = ("--all",)
) -> list[CliCommit]:
    """The commits of every update that ``known`` (revisions, negated) lacks, oldest
    first as ``git rev-list --topo-order --reverse`` lists them (no commit before its
    parents); each credited to the first ref, in push order, that brings it.

    One ``git log`` lists them with their details and parents, whatever the number of
    refs (a push of 5,000 refs starts no git per ref); replace refs are ignored, as
    the diffs ignore them (a replacement must not hide a pushed commit's real parents).
    It lists them in git's plain order: in topological order, git would first order
    every known ref too, by the commit-graph's generations down to the oldest (a
    one-commit push to git/git's 1,016 refs took 200 to 230 ms so, 40 to 80 ms
    without). More than one commit is then ordered by a second git (``_in_order``).
    """
    pushed = [update for update in updates if not is_zero_id(update.new)]
    if not pushed:
        return []
    # Known commits by id go with the tips (``^ID``): a remote's refs can be more than
    # a command line holds; revisions such as ``--all`` stay on it.
    hidden = "".join(f"^{each}\n" for each in known if not each.startswith("-"))
    tips = ("".join(f"{update.new}\n" for update in pushed) + hidden).encode()
    negated = [each for each in known if each.startswith("-")]
    listing = (*_LOG, "--stdin", "--not", *negated)
    details = _parse_details(git_output(git_dir, *listing, "--", stdin=tips))
    new = {each.info.id for each in details}
    # The updates' commits, where the order (more than one commit) or the owners (more
    # than one ref) need them: a new ref at a known commit asks git nothing more.
    several = len(details) > 1 or len(pushed) > 1
    commits = _update_commits(git_dir, pushed, new) if several else []
    if len(details) > 1:
        heads = [each for each in commits if each in new]
        ordered = _in_order(git_dir, details, heads)
        if ordered is None:  # see _in_order: git orders the whole listing itself
            whole = (*listing, "--topo-order", "--reverse", "--")
            ordered = _parse_details(git_output(git_dir, *whole, stdin=tips))
        details = ordered
    owners = _owners(pushed, commits, details) if len(pushed) > 1 else {}
    return [replace(each, ref=owners.get(each.info.id, pushed[0].ref)) for each in details]


def _update_commits(git_dir: str, pushed: Sequence[RefUpdate], new: set[str]) -> list[str]:
    """The commit each update's new id names: the id itself where each is a new
    commit, else as git peels them all (a tag; a commit the repository has). A tag of
    a tree or a blob names none (git says ``<name> missing``, which is no commit's id)."""
    if all(update.new in new for update in pushed):
        return [update.new for update in pushed]
    asked = "".join(f"{update.new}^{{commit}}\n" for update in pushed).encode()
    listed = git_output(git_dir, "cat-file", "--batch-check=%(objectname)", stdin=asked)
    return listed.decode().splitlines()


def _in_order(
    git_dir: str, details: list[CliCommit], heads: Sequence[str]
) -> list[CliCommit] | None:
    """The new commits in ``git rev-list --topo-order --reverse`` order: walked from the
    updates' new commits (``heads``, in push order, as the listing started) down to
    the known parents of new commits, the boundary, which every path from a new commit
    to a known one crosses; a few milliseconds, whatever the repository's refs.

    None where that walk finds other commits: git's plain listing stops walking the
    known refs by commit dates, and dates that run backwards can leave a known commit
    in it that no head's walk meets (never a new one out)."""
    by_id = {each.info.id: each for each in details}
    boundary = {parent: None for each in details for parent in each.parents if parent not in by_id}
    walk = "".join(f"{head}\n" for head in dict.fromkeys(heads))
    walk += "".join(f"^{parent}\n" for parent in boundary)
    order = (*_ORDER, "--stdin", "--")
    ordered = git_output(git_dir, *order, stdin=walk.encode()).decode().split()
    if sorted(ordered) != sorted(by_id):
        return None
    return [by_id[commit] for commit in ordered]


def _owners(
    pushed: Sequence[RefUpdate], commits: Sequence[str], details: Sequence[CliCommit]
) -> dict[str, str]:
    """The first ref, in push order, that reaches each new commit: walked down the new
    commits' parents from each ref's commit (``commits``: a tag peeled), stopping at
    those an earlier ref reached already (all they reach is that ref's too)."""
    parents = {each.info.id: each.parents for each in details}
    owners: dict[str, str] = {}
    for update, commit in zip(pushed, commits, strict=True):
        walk = [commit] if commit in parents else []
        while walk:
            each = walk.pop()
            if each not in owners:
                owners[each] = update.ref
                walk.extend(parent for parent in parents[each] if parent in parents)
    return owners


def _details(git_dir: str, commits: bytes) -> dict[str, CliCommit]:
    output = git_output(git_dir, *_LOG, "--no-walk=unsorted", "--stdin", stdin=commits)
    return {each.info.id: each for each in _parse_details(output)}


def _parse_details(output: bytes) -> list[CliCommit]:
    details = []
    for record in output.split(b"\0\1")[:-1]:
        fields = record.lstrip(b"\n").split(b"\0")
        commit, tree, parents, name, email, when, committer, message = fields
        info = commit_info_from(
            commit.decode(), name, email, seconds(when), message, committer=committer
        )
        parent_ids = tuple(parents.decode().split())
        details.append(CliCommit(info=info, tree=tree.decode(), parents=parent_ids, ref=None))
    return details


def commit_details(git_dir: str, commit: str) -> tuple[CommitInfo, Sequence[str]]:
    """A commit's details (its message as ``git log`` shows it) and parents, by git."""
    details = _details(str(Path(git_dir).resolve()), f"{commit}\n".encode())[commit]
    return details.info, details.parents


def iter_commit(  # noqa: PLR0913 - one commit, and what the caller knows of it already
    git_dir: str,
    commit: str,
    *,
    max_size: int,
    ref: str | None = None,
    known: tuple[CommitInfo, Sequence[str]] | None = None,
    empty_tree: str = "",
    first: CommitDiff | None = None,
) -> Source:
    """The commit marked as walked, its message, then the fragments of the lines it
    adds, diffed as ``staged_cli`` diffs the index: renames against the first parent
    (as ``git log -M`` pairs them), and a merge adds only the lines no parent had.

    ``known`` is its details and parents as the caller's git gave them (else ``git
    log`` is asked), ``empty_tree`` the repository's empty tree id, ``first`` its diff
    with renames against its only parent (``renames.Renames.diff``): each git started
    for one commit costs milliseconds.
    """
    git_dir = str(Path(git_dir).resolve())  # git runs from a scratch directory
    if known is None:
        details = _details(git_dir, f"{commit}\n".encode())[commit]
        known = details.info, details.parents
    info, parents = known
    empty_tree = empty_tree or empty_tree_id(git_dir)
    yield CommitWalked(commit=info.id)
    yield from commit_message(info, ref)
    if first is not None and len(parents) == 1:
        # a commit names its tree wherever git reads a tree-ish (``<commit>:<path>``)
        change = read_tree_change(git_dir, empty_tree, [], info.id, first=first)
    else:
        ids = (commit, *parents)
        trees = git_output(git_dir, "rev-parse", *(f"{each}^{{tree}}" for each in ids))
        tree, *bases = trees.decode().split()
        bases = list(dict.fromkeys(bases))  # a parent listed twice, or two with one tree
        change = read_tree_change(git_dir, empty_tree, bases or [empty_tree], tree)
    if change is None:
        raise GitError(f"git could not diff commit {info.id}")
    yield from change.items(max_size=max_size, commit=info, ref=ref)


def iter_tree_cli(git_dir: str, tree: str, *, max_size: int, prefix: str = "") -> Source:
    """Every file of ``tree``: what it adds to the empty tree."""
    git_dir = str(Path(git_dir).resolve())
    empty_tree = empty_tree_id(git_dir)
    change = read_tree_change(git_dir, empty_tree, [empty_tree], tree)
    if change is None:
        raise GitError(f"git could not read tree {tree}")
    for item in change.items(max_size=max_size):
        if isinstance(item, (Fragment, Skipped)) and prefix:
            yield replace(item, path=f"{prefix}{item.path}")
        else:
            yield item


class Tip:
    """A pushed ref's new object: its type, and the id and type of what it peels to
    (``sources.pushed`` reads them). A plain class: a hook defines it on every push,
    and a dataclass or NamedTuple costs code generated at import."""

    __slots__ = ("kind", "peeled", "peeled_kind", "ref")

    def __init__(self, ref: str, kind: str, peeled: str, peeled_kind: str) -> None:
        self.ref = ref
        self.kind = kind
        self.peeled = peeled
        self.peeled_kind = peeled_kind


def pushed_tips(git_dir: str, updates: Iterable[RefUpdate]) -> list[Tip]:
    """Each pushed update's object and what it peels to, by one ``git cat-file``
    (pre-push: pre-receive reads them with the push's other objects)."""
    pushed = [update for update in updates if not is_zero_id(update.new)]
    names = "".join(f"{update.new}\n{update.new}^{{}}\n" for update in pushed).encode()
    listed = git_output(git_dir, "cat-file", "--batch-check", stdin=names).decode().split("\n")
    kinds = [line.split(" ") for line in listed]
    return [
        Tip(update.ref, kind[1], peeled[0], peeled[1])
        for update, kind, peeled in zip(pushed, kinds[::2], kinds[1::2], strict=False)
    ]


def iter_tagged_objects(
    git_dir: str, updates: Iterable[RefUpdate], *, max_size: int, tips: Sequence[Tip]
) -> Iterator[SourceItem]:
    """What every annotated tag pushed stores, and the whole content of every tree or
    blob a tag names (no commit carries them); ``tips``: each pushed update's object."""
    pushed = [update for update in updates if not is_zero_id(update.new)]
    tags = [(u.new, u.ref) for u, tip in zip(pushed, tips, strict=True) if tip.kind == "tag"]
    yield from tag_messages(git_dir, tags)
    git_dir = str(Path(git_dir).resolve())
    for tip in tips:
        if tip.peeled_kind == "blob":
            yield from _blob_items(git_dir, tip.peeled, tip.ref, max_size)
        elif tip.peeled_kind == "tree":
            items = iter_tree_cli(git_dir, tip.peeled, max_size=max_size, prefix=f"{tip.ref}:")
            yield from (
                replace(item, ref=tip.ref) if isinstance(item, Fragment) else item for item in items
            )


def _blob_items(
    git_dir: str, object_id: str, ref: str, max_size: int
) -> tuple[Fragment | Skipped, ...]:
    data = git_output(git_dir, "cat-file", "blob", object_id)
    reason = unread_reason(data, max_size)
    if reason is not None:
        return (skipped(ref, reason),)
    texts, unopened = judged_as(ref, data, max_size)
    found = tuple(Fragment(path=where, text=text, ref=ref) for where, text in texts)
    return found if unopened is None else (skipped(ref, unopened), *found)
