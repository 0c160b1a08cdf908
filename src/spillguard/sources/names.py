"""The names a clone receives, as text to judge: tree entries at any depth, and refs.

``git ls-tree`` shows every entry name of every tree and ``git ls-remote`` every ref
name, so a name can leak a secret as a file can (``GITHUB_TOKEN=<token>.txt``, a
folder named after a token, ``refs/heads/<token>``). Each tree a push brings is read
as ``tree-walk.c`` reads it, from the commit (or ref) that first reaches it; each
entry's full path is judged once per push, with the pseudo-path ``<path name>``;
a tree found at two paths is walked at the first (its names are the same text).
Subtrees the repository had before the push are not entered: their names were
judged when they came. Each ref a push creates is judged as ``<ref name>``.
"""

from __future__ import annotations

import re

from spillguard.core.decode import printable_text
from spillguard.core.models import is_zero_id
from spillguard.sources.diffparse import fragments
from spillguard.sources.rawobjects import PATH_NAME, REF_NAME

TYPE_CHECKING = False  # typing's, without importing typing (a hook's start-up); mypy reads it alike
if TYPE_CHECKING:
    from collections.abc import Callable, Iterator, Mapping

    from spillguard.core.models import CommitInfo, Fragment, RefUpdate

#: A tree entry's mode bits that say what it names (``S_IFMT``), and a tree's.
_TYPE_BITS = 0o170000
_TREE = 0o040000
#: The types git reads an entry's object as a blob for (``canon_mode``): regular files
#: and symlinks; any other is a submodule's commit.
_BLOBS = frozenset({0o100000, 0o120000})
#: What the modes git writes name, looked up rather than parsed: a tree walk meets
#: every entry of every tree a push brings.
_KINDS = {b"100644": 0o100000, b"100755": 0o100000, b"120000": 0o120000, b"40000": _TREE}

#: A tree entry: its mode, name and raw object id, as the tree holds them.
Entry = tuple[bytes, bytes, bytes]


def tree_entries(data: bytes, id_length: int) -> list[Entry] | None:
    """A tree's entries as git reads them (``MODE NAME\\0`` then the raw id, the mode
    in octal digits); None when the bytes are no tree git could read."""
    entries: list[Entry] = _ENTRY[id_length].findall(data)
    # the entries must tile the tree: bytes findall passed over are no entry git reads
    covered = sum(len(mode) + len(name) for mode, name, _ in entries)
    return entries if covered + len(entries) * (id_length + 2) == len(data) else None


#: A tree entry, by the length of its raw id (SHA-1, SHA-256), parsed in C: a tree walk
#: meets every entry of every tree a push brings.
_ENTRY = {
    length: re.compile(rb"([0-7]+) ([^\0]*)\0(.{%d})" % length, re.DOTALL) for length in (20, 32)
}


def _kind(mode: bytes) -> int:
    """What a mode git does not write names (``S_IFMT``), as its ``canon_mode`` reads it."""
    return int(mode, 8) & _TYPE_BITS


class TreeNames:
    """Walks the trees a push brings (``trees`` gives their bytes by id, when the first
    walk starts), each once."""

    def __init__(self, trees: Callable[[], Mapping[str, bytes]]) -> None:
        self._load = trees
        self._trees: Mapping[str, bytes] | None = None
        self.visited: set[str] = set()
        #: The raw ids of the blobs the visited trees name (regular files and
        #: symlinks; a submodule's commit is no object of this repository).
        self._blobs: set[bytes] = set()
        #: Full paths judged so far: a path that every new version of a tree repeats
        #: is judged once.
        self.judged: set[bytes] = set()

    @property
    def blobs(self) -> list[str]:
        """The ids of the blobs the visited trees name."""
        return [blob.hex() for blob in self._blobs]

    def items(
        self, tree: str, *, prefix: bytes = b"", info: CommitInfo | None, ref: str | None
    ) -> Iterator[Fragment]:
        """The names of ``tree`` (if the push brings it) and of every subtree the push
        brings, as full paths under ``prefix``; ``info`` and ``ref`` are what first
        reached it."""
        if self._trees is None:
            self._trees = self._load()
        pending = [(tree, prefix)]
        while pending:
            tree_id, under = pending.pop()
            if tree_id in self.visited or tree_id not in self._trees:
                continue
            self.visited.add(tree_id)
            data = self._trees[tree_id]
            entries = tree_entries(data, len(tree_id) // 2)
            if entries is None:  # not a tree git reads: its printable runs, whole
                text = printable_text(data).encode()
                yield from fragments(PATH_NAME, {1: text}, info, ref)
                continue
            yield from fragments(PATH_NAME, self._walk(entries, under, pending), info, ref)

    def _walk(
        self, entries: list[Entry], under: bytes, pending: list[tuple[str, bytes]]
    ) -> dict[int, bytes]:
        """The lines of a tree's paths not judged yet; its subtrees go to ``pending``."""
        lines = {}
        judged = self.judged
        for number, (mode, name, object_id) in enumerate(entries, start=1):
            path = under + name
            if path not in judged:
                judged.add(path)
                lines[number] = path + b"\n"
            kind = _KINDS.get(mode) or _kind(mode)
            if kind == _TREE:
                pending.append((object_id.hex(), path + b"/"))
            elif kind in _BLOBS:
                self._blobs.add(object_id)
        return lines


def ref_name_items(updates: tuple[RefUpdate, ...]) -> Iterator[Fragment]:
    """The name of each ref the push creates (``ls-remote`` shows it to everyone)."""
    for update in updates:
        if is_zero_id(update.old) and not is_zero_id(update.new):
            name = update.ref.encode("utf-8", "surrogateescape") + b"\n"
            yield from fragments(REF_NAME, {1: name}, None, update.ref)
