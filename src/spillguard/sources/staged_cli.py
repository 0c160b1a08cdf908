"""The staged changes from the git command line, for every repository, SHA-1 or SHA-256.

A commit hook runs on every commit, and importing libgit2 alone costs more than the
rest of the hook, so git reads all of it: the index written as a tree (``git
write-tree``), that tree diffed against ``HEAD``'s (``git diff-tree``, set up as for
history scans), then the sizes of the new blobs and the content of the small ones
and of the staged configuration files (``git cat-file``).

An unborn ``HEAD`` is diffed against the empty tree, renames are detected (``-M``:
git's pairing is the contract, as ``git log -M`` shows it), submodules are skipped,
a symlink's target is judged as text, a mode-only change adds nothing, binaries and
UTF-16/32 text are diffed again in memory (``blobdiff``), and during a merge only
the lines that are new relative to ``MERGE_HEAD`` too are the commit's own.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

from spillguard.core.archives import is_archive
from spillguard.core.decode import (
    LARGE_BINARY,
    LFS_POINTER_LIMIT,
    is_binary,
    is_lfs_pointer,
    skipped,
)
from spillguard.core.errors import GitError, missing_object
from spillguard.core.values import Frozen, fill, replace
from spillguard.sources.attributes import (
    attributes_asked,
    is_attribute_file,
    named,
    names_attributes,
)
from spillguard.sources.context import may_need_context
from spillguard.sources.diffparse import (
    EMPTY_TREE,
    REGULAR_MODES,
    CommitDiff,
    carried_lines,
    fragments,
    git_command,
    lines_by_number,
    run_diff_tree,
    starts_archive,
    starts_wide,
)
from spillguard.sources.gitcli import (
    LOOKUP_GIT_MEMORY,
    SIDE_GIT_MEMORY,
    cat_objects,
    run_git,
)
from spillguard.sources.pemblocks import may_touch_block, with_touched_blocks
from spillguard.sources.scratch import scratch as scratch_in

TYPE_CHECKING = False  # typing's, without importing typing (a hook's start-up); mypy reads it alike
if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence

    from spillguard.core.models import CommitInfo
    from spillguard.sources import Source
    from spillguard.sources.blobdiff import Diff
    from spillguard.sources.diffparse import FileDiff
    from spillguard.sources.gitcli import Started

_SHA1_LENGTH = 40
_GITLINK_MODE = 0o160000
#: Modes whose blobs are content to judge: regular files and symlinks.
_BLOB_MODES = REGULAR_MODES | {0o120000}


class Staged(Frozen):
    """What the index holds against ``HEAD``, read once, judged once ``max_size`` is known."""

    __slots__ = ("asked", "files", "small", "texts", "trees", "whole")
    UNCOMPARED = frozenset({"asked"})

    #: (path, its diff, the new blob's size), in git's order.
    files: tuple[tuple[str, FileDiff, int], ...]
    #: Content of the new blobs small enough to be LFS pointers, by blob id.
    small: dict[str, bytes]
    #: The staged content of each requested file, or None when it is not staged.
    texts: dict[str, bytes | None]
    #: The whole new content of renamed files and of files whose added lines may lie in
    #: a PEM block, by blob id.
    whole: dict[str, bytes]
    #: The git directory, ``HEAD``'s tree and the index's, and git asked whether an
    #: attribute file of ``HEAD``'s names an attribute a checkout applies
    #: (``read_staged``): its checkout is judged too (``sources.checkout``).
    trees: tuple[str, str, str] | None
    asked: Started | None

    def __init__(  # noqa: PLR0913 - every field, by name
        self,
        *,
        files: tuple[tuple[str, FileDiff, int], ...],
        small: dict[str, bytes],
        texts: dict[str, bytes | None],
        whole: dict[str, bytes] | None = None,
        trees: tuple[str, str, str] | None = None,
        asked: Started | None = None,
    ) -> None:
        if whole is None:
            whole = {}
        fill(self, locals())

    def checkout_named(self) -> bool:
        """Whether the index's checkout may write a file otherwise than git stores it:
        ``HEAD``'s attribute files, or lines staged into one, name such an attribute."""
        staged = any(
            is_attribute_file(path) and (file.binary or names_attributes(file.added.values()))
            for path, file, _ in self.files
        )
        return named(self.asked) or staged

    def items(
        self, *, max_size: int, commit: CommitInfo | None = None, ref: str | None = None
    ) -> Source:
        for path, file, size in self.files:
            reason = self._skip_reason(file, size, max_size)
            if reason is not None:
                yield skipped(path, reason, None if commit is None else commit.id)
                continue
            if file.archive is not None:
                yield from _archive_items(path, file.archive, max_size, commit, ref)
                continue
            content = self.whole.get(file.new_id)
            added = file.added
            if (
                content is not None
                and not file.binary  # a binary's lines are its printable runs
                and (file.removed_after or may_touch_block(added))
            ):
                added = with_touched_blocks(added, content, file.removed_after)
            around = (
                lines_by_number(content)
                if content is not None and not file.binary and may_need_context(added)
                else None
            )
            yield from fragments(path, added, commit, ref, whole=around)
            if file.also is not None:
                yield from fragments(path, file.also, commit, ref)
            if content is not None and file.old_path is not None and not is_binary(content):
                carried = carried_lines(content, added)
                if file.carry_within is not None:
                    carried = {n: line for n, line in carried.items() if n in file.carry_within}
                source = unquote(file.old_path).decode("utf-8", "surrogateescape")
                yield from fragments(path, carried, commit, ref, source)

    def _skip_reason(self, file: FileDiff, size: int, max_size: int) -> str | None:
        """In ``git.skip_reason``'s order. A binary's added lines are its printable runs
        (``_decoded``; SHA-1 leaves binaries to libgit2), unless it is over the limit."""
        if file.new_mode == _GITLINK_MODE:
            return "submodule"
        if file.binary and size > max_size:
            return LARGE_BINARY
        if is_lfs_pointer(self.small.get(file.new_id, b"")):
            return "LFS pointer"
        return None


def _archive_items(
    path: str,
    archive: tuple[bytes | None, bytes],
    max_size: int,
    commit: CommitInfo | None,
    ref: str | None,
) -> Source:
    """An archive's members' added lines, each at ``path!member``; where it cannot be
    opened within the limits, why (for ``on_unscannable``) and its printable runs."""
    from spillguard.sources.blobdiff import members_added, runs_added

    old, new = archive
    found = members_added(path, old, new, max_size)
    if isinstance(found, str):
        yield skipped(path, found, None if commit is None else commit.id)
        yield from fragments(path, runs_added(old, new), commit, ref)
        return
    for member, added in found:
        yield from fragments(member, added, commit, ref)


def read_staged(paths: Sequence[str]) -> Staged:
    """The staged changes and the staged content of ``paths``."""
    git_dir, head_tree, index_tree, empty_tree = _trees()
    # beside the diffs: whether HEAD's attribute files make a checkout write otherwise
    asked = attributes_asked(git_dir, [head_tree] if head_tree != empty_tree else [])
    bases = [head_tree, *_merge_heads(git_dir)]
    staged = read_tree_change(git_dir, empty_tree, bases, index_tree, paths)
    if staged is None:
        named(asked)
        raise GitError("git could not read the staged changes")
    return replace(staged, trees=(git_dir, head_tree, index_tree), asked=asked)


def read_tree_change(  # noqa: PLR0913 - the trees, and what the caller has diffed already
    git_dir: str,
    empty_tree: str,
    bases: Sequence[str],
    tree: str,
    paths: Sequence[str] = (),
    *,
    first: CommitDiff | None = None,
) -> Staged | None:
    """What ``tree`` adds, all by git (SHA-256): against ``bases[0]`` with renames, and
    only the lines also new relative to the other bases (a merge's other parents).
    ``first``: that first diff, with renames, where the caller has it already (then
    ``bases`` are the other ones)."""
    diffs = _diffs(git_dir, empty_tree, bases, tree, "-M", first=first)
    if diffs is None:
        return None
    files = _changed_files(diffs[0], diffs[1:])
    if files is None or not _decoded(git_dir, diffs[0], diffs[1:]):
        return None
    return _with_blobs(git_dir, tree, files, paths)


def _trees() -> tuple[str, str, str, str]:
    """The git directory, HEAD's tree, the index written as a tree and the empty tree."""
    located = run_git("rev-parse", "--absolute-git-dir", "--git-path", "index", "HEAD^{tree}")
    if located is None:  # an unborn HEAD: every staged file is new
        located = run_git("rev-parse", "--absolute-git-dir", "--git-path", "index")
        if located is None:
            raise GitError(".: not a git repository (or git is not installed)")
        git_dir, index = located.decode().split("\n")[:2]
        head_tree = empty_tree = empty_tree_id()
    else:
        git_dir, index, head_tree = located.decode().split("\n")[:3]
        empty_tree = EMPTY_TREE if len(head_tree) == _SHA1_LENGTH else empty_tree_id()
    return git_dir, head_tree, _index_tree(git_dir, index), empty_tree


def _index_tree(git_dir: str, index: str) -> str:
    """The index (the file ``GIT_INDEX_FILE`` names, during ``git commit -a``) written
    as a tree, from a copy beside an empty work tree: writing the index itself, git
    reads again the files it cannot tell from their staged version by their times,
    through the clean filter their attributes name (a program)."""
    with scratch_in(git_dir) as scratch:
        written = None
        if scratch is not None:
            copy = Path(scratch, "index")
            with contextlib.suppress(FileNotFoundError):  # none yet: nothing is staged
                copy.write_bytes(Path(index).read_bytes())
            where = ("-C", scratch, f"--git-dir={git_dir}", f"--work-tree={scratch}")
            written = run_git(*where, "write-tree", also={"GIT_INDEX_FILE": str(copy)})
    if written is None:
        raise GitError("git could not write the index as a tree: are files still unmerged?")
    return written.decode().strip()


def empty_tree_id(git_dir: str = "") -> str:
    """The empty tree's id in this repository's object format (SHA-256 here)."""
    where = (f"--git-dir={git_dir}",) if git_dir else ()
    return (run_git(*where, "hash-object", "-t", "tree", "--stdin") or b"").decode().strip()


def _merge_heads(git_dir: str) -> list[str]:
    """The trees of the commits a merge in progress brings in (``MERGE_HEAD``)."""
    try:
        heads = Path(git_dir, "MERGE_HEAD").read_text(encoding="ascii").split()
    except OSError:
        return []
    output = run_git("rev-parse", *(f"{head}^{{tree}}" for head in heads)) if heads else b""
    return [] if output is None else output.decode().split()


def _diffs(
    git_dir: str,
    empty_tree: str,
    bases: Sequence[str],
    tree: str,
    *options: str,
    first: CommitDiff | None = None,
) -> list[CommitDiff] | None:
    """``tree`` diffed against each of ``bases``, in order, after ``first`` if given;
    None when git fails."""
    diffs: list[CommitDiff] = [] if first is None else [first]
    if not bases:
        return diffs
    with scratch_in(git_dir) as scratch:
        if scratch is None:
            return None
        command, env = git_command(git_dir, scratch, empty_tree)
        command += SIDE_GIT_MEMORY  # one commit (or the staged files): few objects
        try:
            if not diffs:
                # renames only against HEAD, as libgit2's find_renames on the index diff
                stdin = f"{bases[0]} {tree}\n".encode()
                found = [*run_diff_tree(command, env, stdin, scratch, *options)]
                diffs.append(found[0] if found else CommitDiff(commit=bases[0]))
                bases = bases[1:]
            others = _against_others(command, env, scratch, (diffs[0], bases, tree))
        except GitError:
            return None
    return None if others is None else [*diffs, *others]


def _against_others(
    command: list[str],
    env: dict[str, str],
    scratch: str,
    what: tuple[CommitDiff, Sequence[str], str],
) -> list[CommitDiff] | None:
    """``tree`` diffed against each of the other ``bases``, in one git (a merge may have
    seventy parents), only in the files ``first`` changes; None if git lost count."""
    first, bases, tree = what
    given = _only_paths(first) if bases else None
    if given is None:
        return [CommitDiff(commit=base) for base in bases]
    stdin = "".join(f"{base} {tree}\n" for base in bases).encode()
    if len(bases) == 1:
        found = [*run_diff_tree(command, env, stdin, scratch, *given)]
        return found if len(found) == len(bases) else None
    # Against many bases, the lines of a file new to one of them are all new against
    # it: only the files a base has in another version need their patch (a merge of
    # seventy branches that each add a file would have 4,900 files' patches).
    present = [*run_diff_tree(command, env, stdin, scratch, *given, patch=False)]
    changed = [*run_diff_tree(command, env, stdin, scratch, "--diff-filter=MT", *given)]
    if not len(present) == len(changed) == len(bases):
        return None
    for listed, patched in zip(present, changed, strict=True):
        by_path = {file.path: file for file in patched.files}
        listed.files = [by_path.get(file.path, file) for file in listed.files]
    return present


#: The most bytes of paths given to git at once (Linux takes 2 MiB of arguments).
_PATHS_LIMIT = 1 << 19


def _only_paths(diff: CommitDiff) -> tuple[str, ...] | None:
    """How to diff a merge against its other parents: only the files it changes
    against the first (no other is asked of those diffs), by literal paths; None
    when there is none. Merging another history diffed every file of the
    repository against that parent (git/git: 1.6 million lines for one merge)."""
    paths = [os.fsdecode(unquote(file.path)) for file in diff.files if file.status != "D"]
    if not paths:
        return None
    if sum(map(len, paths)) > _PATHS_LIMIT:
        return ()
    return ("--", *(f":(literal){path}" for path in paths))


def _changed_files(
    diff: CommitDiff, others: Sequence[CommitDiff]
) -> list[tuple[str, FileDiff]] | None:
    """Every file the index adds to, each with only the lines no merged tree had."""
    if diff.sections != len(diff.files):
        return None
    against = [{file.path: file for file in other.files} for other in others]
    files = []
    for file in diff.files:
        if file.status == "D" or (file.status == "M" and file.old_id == file.new_id):
            continue  # a deletion, or a mode-only change: nothing added
        seen = [other.get(file.path) for other in against]
        if None in seen:
            continue  # taken from a merged commit as it is: not this commit's own
        if seen:
            file.removed_after = []  # a merge's removals are not judged (git's combined view)
        for other in seen:
            if other is not None and other.status != "A":  # all new against an "A"'s base
                # a base's version git calls binary: its lines are found in memory
                file.unsure = file.unsure or other.binary or other.unsure
                file.added = {n: line for n, line in file.added.items() if n in other.added}
                within = set(other.added)
                if file.carry_within is not None:
                    within &= file.carry_within
                file.carry_within = within
        files.append((unquote(file.path).decode("utf-8", "surrogateescape"), file))
    return files


def _decoded(git_dir: str, diff: CommitDiff, others: Sequence[CommitDiff]) -> bool:
    """Diff again, as libgit2's path does, the files git called binary, split on a NUL
    (UTF-16/32 text) or whose added first line opens with a UTF-16/32 mark: real
    binaries stay binary, wide text gets its added lines in each reading. False when
    git cannot read the blobs."""
    against = [{file.path: file.old_id for file in other.files} for other in others]
    wide = [
        (file, [file.old_id, *(ids.get(file.path, "") for ids in against)])
        for file in diff.files
        if (file.binary or file.unsure or starts_wide(file.added) or starts_archive(file.added))
        and file.new_mode in _BLOB_MODES
        and file.status != "D"
    ]
    if not wide:
        return True
    names = {name for file, bases in wide for name in (file.new_id, *bases) if name.strip("0")}
    contents = blob_contents(git_dir, sorted(names))
    if contents is None:
        return False
    from spillguard.sources.blobdiff import diffs_for, text_changes

    for file, bases in wide:
        new = contents[file.new_id]
        if is_archive(new):  # its members are judged, once the size limit is known
            file.binary, file.added, file.archive = True, {}, (contents.get(bases[0]), new)
            continue
        # lines new against HEAD's side and every merged one, in each reading
        file.binary = is_binary(new)  # then its added lines are its printable runs
        file.added, *more = (
            _added_against([contents.get(base) for base in bases], new, diff)
            for diff in diffs_for(new)
        )
        file.also = more[0] if more else None
        if not file.binary:
            _, removed_after = text_changes(contents.get(bases[0]), new)
            file.removed_after = [] if bases[1:] else removed_after  # a merge's: none
    return True


def _added_against(bases: Sequence[bytes | None], new: bytes, diff: Diff) -> dict[int, bytes]:
    """The lines ``new`` adds to the first base that are new against every other too."""
    added = diff(bases[0], new)
    for base in bases[1:]:
        also = diff(base, new)
        added = {n: line for n, line in added.items() if n in also}
    return added


def unquote(path: bytes) -> bytes:
    """A path as git quotes it (``"a\\tb"``, octal escapes for other bytes), unquoted."""
    if not path.startswith(b'"'):
        return path
    text = path[1:-1].decode("latin-1")
    return text.encode("latin-1").decode("unicode_escape").encode("latin-1")


def _with_blobs(
    git_dir: str, tree: str, files: list[tuple[str, FileDiff]], paths: Sequence[str]
) -> Staged | None:
    blobs = [file.new_id for _, file in files]
    staged = [f"{tree}:{path}" for path in paths]
    sizes = _sizes(git_dir, blobs + staged)
    if sizes is None:
        return None
    small = [blob for blob in blobs if sizes.get(blob, LFS_POINTER_LIMIT) < LFS_POINTER_LIMIT]
    # A renamed file's whole content (what the rename carried may meet other rules), and
    # that of a file whose added lines may lie in a PEM block or need the lines around.
    whole = [
        file.new_id
        for _, file in files
        if not file.binary
        and (
            file.old_path is not None
            or file.removed_after
            or may_touch_block(file.added)
            or may_need_context(file.added)
        )
    ]
    wanted = dict.fromkeys([*small, *whole, *(name for name in staged if name in sizes)])
    contents = blob_contents(git_dir, list(wanted))
    if contents is None:
        return None
    return Staged(
        files=tuple((path, file, sizes.get(file.new_id, 0)) for path, file in files),
        small={blob: contents[blob] for blob in small},
        texts={path: contents.get(f"{tree}:{path}") for path in paths},
        whole={blob: contents[blob] for blob in whole},
    )


def _sizes(git_dir: str, names: Sequence[str]) -> dict[str, int] | None:
    """The size of each named blob; names that are missing or not blobs are left out."""
    output = run_git(
        *LOOKUP_GIT_MEMORY, f"--git-dir={git_dir}", "cat-file", "--batch-check", stdin=_lines(names)
    )
    if output is None:
        return None
    sizes = {}
    for name, line in zip(names, output.decode().splitlines(), strict=True):
        fields = line.split(" ")
        if len(fields) == 3 and fields[1] == "blob":  # id, type, size
            sizes[name] = int(fields[2])
    return sizes


def blob_contents(git_dir: str, names: Sequence[str]) -> dict[str, bytes] | None:
    """The content of each named blob; a GitError names one git does not have."""
    if not names:
        return {}
    output = run_git(
        *LOOKUP_GIT_MEMORY, f"--git-dir={git_dir}", "cat-file", "--batch", stdin=_lines(names)
    )
    if output is None:
        return None
    found = cat_objects(output, names)
    missing = next((name for name in names if name not in found), None)
    if missing is not None:
        raise GitError(missing_object(missing))
    return {name: content for name, (_, _, content) in found.items()}


def _lines(names: Iterable[str]) -> bytes:
    return "".join(f"{name}\n" for name in names).encode()
