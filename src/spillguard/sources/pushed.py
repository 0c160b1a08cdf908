"""Everything a push brings into a server repository, as items to judge (pre-receive).

What git stores is judged, not what ``git log`` shows of it:

- each new commit, oldest first: the lines it adds (``gitdiff``), then what its raw
  bytes hold (``rawobjects``: message past any NUL, author and committer, every
  other header, a message's encoding both ways), then the names of the trees it is
  the first to bring (``names``);
- each annotated tag pushed, a tag of a tag too, from its raw bytes, and the whole
  content and the names of a tree or blob a ref names directly;
- the name of each ref the push creates;
- the objects the push carries that no pushed ref reaches (``carried``): counted,
  for the verdict, and judged whole where the administrator chose so.
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping

from spillguard.core import gitcommand
from spillguard.core.decode import judged_as, skipped, unread_reason
from spillguard.core.errors import GitError, missing_object
from spillguard.core.models import CommitInfo, CommitWalked, Fragment, is_zero_id
from spillguard.sources.diffparse import BlobHeads
from spillguard.sources.gitcli import cat_objects, git_output
from spillguard.sources.gitdiff import iter_commits_fast
from spillguard.sources.names import TreeNames, ref_name_items
from spillguard.sources.rawobjects import (
    COMMIT_AUTHOR,
    COMMIT_MESSAGE,
    UNREACHED_BLOB,
    commit_items,
    commit_tree,
    tag_items,
)
from spillguard.sources.received_cli import Tip, iter_tagged_objects

TYPE_CHECKING = False  # typing's, without importing typing (a hook's start-up); mypy reads it alike
if TYPE_CHECKING:
    from collections.abc import Iterator, Sequence

    from spillguard.core.models import RefUpdate
    from spillguard.sources import Source, SourceItem
    from spillguard.sources.carried import Carried
    from spillguard.sources.received_cli import CliCommit

#: What ``gitdiff`` reads of a commit from ``git log``'s rendering: here the raw bytes say it.
_RENDERED = frozenset({COMMIT_MESSAGE, COMMIT_AUTHOR})


class PushPlan:
    """What to read: the updates, the commits to judge, the objects carried. A plain
    class, as ``received_cli.Tip`` is."""

    __slots__ = ("carried", "commits", "git_dir", "listed", "max_size", "unreached", "updates")

    def __init__(  # noqa: PLR0913 - one field each
        self,
        *,
        git_dir: str,
        updates: tuple[RefUpdate, ...],
        commits: Sequence[CliCommit],
        listed: Sequence[str],
        carried: Carried,
        max_size: int,
        unreached: bool = False,
    ) -> None:
        self.git_dir = git_dir
        self.updates = updates
        self.commits = commits
        #: Every commit git listed as new, those left unjudged too (the cap, a token).
        self.listed = listed
        self.carried = carried
        self.max_size = max_size
        #: Judge the objects no pushed ref reaches (``on_unreachable = "judge"``).
        self.unreached = unreached


def push_items(plan: PushPlan) -> Source:
    """Every item of the push, in the order the module doc gives."""
    raw = _Raw(plan.git_dir)
    pushed = [update for update in plan.updates if not is_zero_id(update.new)]
    # One git reads the commits, the pushed objects and what they peel to, and the
    # quarantine's trees (without one, the trees are known only once git walks them);
    # a push of many trees has each read as its walk reaches it.
    quarantined = plan.carried.quarantined_trees()
    at_once = quarantined if quarantined is not None and len(quarantined) <= _TREES_AT_ONCE else ()
    tips = [name for update in pushed for name in (update.new, f"{update.new}^{{}}")]
    raw.read([*(each.info.id for each in plan.commits), *at_once, *tips])
    with contextlib.closing(_TreeReader(plan, raw, quarantined)) as trees:
        names = TreeNames(trees.trees)
        yield from _commit_items(plan, raw.data, names)
        yield from _pushed_objects(plan, raw, names, pushed)


#: The most trees read with the commits, at once: beyond, a tree is read as the walk
#: reaches it (one git answering one at a time), so memory holds the trees pending.
_TREES_AT_ONCE = 2000


class _TreeReader:
    """The trees a push brings, as ``names.TreeNames`` reads them: read with the
    commits (a push of a few), or each when the walk reaches it (of many)."""

    def __init__(self, plan: PushPlan, raw: _Raw, quarantined: list[str] | None) -> None:
        self._plan = plan
        self._raw = raw
        self._quarantined = quarantined
        self._one_by_one: BlobHeads | None = None

    def trees(self) -> Mapping[str, bytes]:
        """Called once the first commit is judged: a failure to list them keeps it."""
        ids = self._quarantined
        if ids is None:
            ids = [oid for oid, kind in self._plan.carried.kinds.items() if kind == "tree"]
        if len(ids) <= _TREES_AT_ONCE:
            self._raw.read(ids)
            return {oid: self._raw.data[oid] for oid in ids}
        command = gitcommand.command(f"--git-dir={self._plan.git_dir}")
        self._one_by_one = BlobHeads(command, gitcommand.environment(), _LARGEST)
        return _OneByOne(frozenset(ids), self._one_by_one)

    def close(self) -> None:
        if self._one_by_one is not None:
            self._one_by_one.close()


#: Any tree's size: a tree is read whole.
_LARGEST = 1 << 62


class _OneByOne(Mapping[str, bytes]):
    """Trees by id, each read when asked for (and then left to be freed)."""

    def __init__(self, ids: frozenset[str], git: BlobHeads) -> None:
        self._ids = ids
        self._git = git

    def __getitem__(self, tree: str) -> bytes:
        found = self._git.read(tree) if tree in self._ids else None
        if found is None:
            raise KeyError(tree)
        return found[1]

    def __contains__(self, tree: object) -> bool:
        return tree in self._ids

    def __iter__(self) -> Iterator[str]:
        return iter(self._ids)

    def __len__(self) -> int:
        return len(self._ids)


def _pushed_objects(plan: PushPlan, raw: _Raw, names: TreeNames, pushed: list[RefUpdate]) -> Source:
    """The pushed tags, trees and blobs, the created refs' names, and what the push
    carries that no pushed ref reaches (counted; judged where the policy says so)."""
    peeled = [raw.tip(update) for update in pushed]
    yield from iter_tagged_objects(plan.git_dir, plan.updates, max_size=plan.max_size, tips=peeled)
    for tip in peeled:
        if tip.peeled_kind == "tree":
            prefix = tip.ref.encode("utf-8", "surrogateescape") + b":"
            yield from names.items(tip.peeled, prefix=prefix, info=None, ref=tip.ref)
    yield from ref_name_items(plan.updates)
    plan.carried.account([*plan.listed, *(update.new for update in pushed)])
    plan.carried.account([*names.visited, *names.blobs])
    if plan.unreached:
        kinds = plan.carried.kinds
        raw.read([oid for oid in plan.carried.unreached if kinds[oid] != "tree"])
        yield from _unreached_items(plan, raw.data, names)


class _Raw:
    """The push's objects, each request read by one ``git cat-file --batch``."""

    def __init__(self, git_dir: str) -> None:
        self._git_dir = git_dir
        #: Content by name (an id, or ``ID^{}``), and each name's id and type.
        self.data: dict[str, bytes] = {}
        self._found: dict[str, tuple[str, str]] = {}

    def read(self, names: Sequence[str]) -> None:
        wanted = [name for name in dict.fromkeys(names) if name not in self.data]
        if not wanted:
            return
        asked = "".join(f"{name}\n" for name in wanted).encode()
        output = git_output(self._git_dir, "cat-file", "--batch", stdin=asked)
        found = cat_objects(output, wanted)
        missing = next((name for name in wanted if name not in found), None)
        if missing is not None:
            raise GitError(missing_object(missing))
        for name, (object_id, kind, content) in found.items():
            self.data[name] = content
            self._found[name] = (object_id, kind)

    def tip(self, update: RefUpdate) -> Tip:
        """The pushed object of ``update``: its type, and what it peels to."""
        peeled, peeled_kind = self._found[f"{update.new}^{{}}"]
        return Tip(update.ref, self._found[update.new][1], peeled, peeled_kind)


def _commit_items(plan: PushPlan, raw: dict[str, bytes], names: TreeNames) -> Source:
    """Each commit's mark, what its raw bytes hold, its files, then its trees' names."""
    by_id = {each.info.id: each for each in plan.commits}
    diffs = iter_commits_fast(
        plan.git_dir,
        list(by_id),
        max_size=plan.max_size,
        refs={commit: each.ref for commit, each in by_id.items() if each.ref is not None},
        parents={commit: each.parents for commit, each in by_id.items()},
    )
    last = None
    for item in diffs:
        if isinstance(item, Fragment) and item.path in _RENDERED:
            continue  # the rendering of what the raw bytes give below
        if isinstance(item, CommitWalked):
            if last is not None:
                yield from _tree_names(last, raw, names)
            last = by_id[item.commit]
            yield item
            yield from commit_items(item.commit, raw[item.commit], last.info, last.ref)
        else:
            yield item
    if last is not None:
        yield from _tree_names(last, raw, names)


def _tree_names(commit: CliCommit, raw: dict[str, bytes], names: TreeNames) -> Source:
    tree = commit_tree(raw[commit.info.id])
    return names.items(tree, info=commit.info, ref=commit.ref) if tree is not None else iter(())


def _unreached_items(plan: PushPlan, raw: dict[str, bytes], names: TreeNames) -> Source:
    """The objects no pushed ref reaches, each judged whole, named by its own id."""
    kinds = plan.carried.kinds
    for object_id in plan.carried.unreached:
        kind = kinds[object_id]
        own = CommitInfo(id=object_id, author="", email="", date="")
        if kind == "commit":
            yield from commit_items(object_id, raw[object_id], None, None)
        elif kind == "tag":
            yield from tag_items(object_id, raw[object_id], None)
        elif kind == "tree":
            yield from names.items(object_id, info=own, ref=None)
        else:
            yield from _whole_blob(object_id, raw[object_id], own, plan.max_size)


def _whole_blob(
    object_id: str, data: bytes, own: CommitInfo, max_size: int
) -> Iterator[SourceItem]:
    reason = unread_reason(data, max_size)
    if reason is not None:
        yield skipped(UNREACHED_BLOB, reason, object_id)
        return
    texts, unopened = judged_as(UNREACHED_BLOB, data, max_size)
    if unopened is not None:
        yield skipped(UNREACHED_BLOB, unopened, object_id)
    for where, text in texts:
        yield Fragment(path=where, text=text, commit=own)
