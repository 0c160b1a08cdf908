"""The names a clone receives, as text to judge: tree entries at any depth, and refs.

``git ls-tree`` shows every entry name of every tree and ``git ls-remote`` every ref
name, so a name can leak a secret as a file can (``GITHUB_TOKEN=<token>.txt``, a
folder named after a token, ``refs/heads/<token>``). Each tree a push brings is read
as ``tree-walk.c`` reads it, from the commit (or ref) that first reaches it; each
entry's full path is judged once per push, with the pseudo-path ``<path name>``.
Subtrees the repository had before the push are not entered: their names were
judged when they came. Each ref a push creates is judged as ``<ref name>``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from spillguard.core.decode import printable_text
from spillguard.core.models import is_zero_id
from spillguard.sources.diffparse import fragments
from spillguard.sources.rawobjects import PATH_NAME, REF_NAME

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator, Mapping

    from spillguard.core.models import CommitInfo, Fragment, RefUpdate

#: A tree entry's mode bits that say what it names (``S_IFMT``), and a tree's.
_TYPE_BITS = 0o170000
_TREE = 0o040000
#: The types git reads an entry's object as a blob for (``canon_mode``): regular files
#: and symlinks; any other is a submodule's commit.
_BLOBS = frozenset({0o100000, 0o120000})


#: A tree entry: its mode, name and object id.
Entry = tuple[int, bytes, str]


def tree_entries(data: bytes, id_length: int) -> list[Entry] | None:
    """A tree's entries as git reads them (``MODE NAME\\0`` then the raw id); None when
    the bytes are no tree git could read."""
    entries = []
    position = 0
    while position < len(data):
        space = data.find(b" ", position)
        nul = data.find(b"\0", space + 1)
        end = nul + 1 + id_length
        if space < 0 or nul < 0 or end > len(data):
            return None
        try:
            mode = int(data[position:space], 8)
        except ValueError:
            return None
        entries.append((mode, data[space + 1 : nul], data[nul + 1 : end].hex()))
        position = end
    return entries


class TreeNames:
    """Walks the trees a push brings (``trees`` gives their bytes by id, when the first
    walk starts), each once."""

    def __init__(self, trees: Callable[[], Mapping[str, bytes]]) -> None:
        self._load = trees
        self._trees: Mapping[str, bytes] | None = None
        self.visited: set[str] = set()
        #: The blobs the visited trees name (regular files and symlinks; a submodule's
        #: commit is no object of this repository).
        self.blobs: set[str] = set()
        #: Full paths judged so far: a path that every new version of a tree repeats
        #: is judged once.
        self.judged: set[bytes] = set()

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
            lines = {}
            for number, (mode, name, object_id) in enumerate(entries, start=1):
                path = under + name
                if path not in self.judged:
                    self.judged.add(path)
                    lines[number] = path + b"\n"
                kind = mode & _TYPE_BITS
                if kind == _TREE:
                    pending.append((object_id, path + b"/"))
                elif kind in _BLOBS:
                    self.blobs.add(object_id)
            yield from fragments(PATH_NAME, lines, info, ref)


def ref_name_items(updates: tuple[RefUpdate, ...]) -> Iterator[Fragment]:
    """The name of each ref the push creates (``ls-remote`` shows it to everyone)."""
    for update in updates:
        if is_zero_id(update.old) and not is_zero_id(update.new):
            name = update.ref.encode("utf-8", "surrogateescape") + b"\n"
            yield from fragments(REF_NAME, {1: name}, None, update.ref)
