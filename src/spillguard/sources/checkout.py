"""Files as a checkout of their commit writes them: its own ``.gitattributes`` applied.

git stores what ``git add`` made of a file, and a checkout converts it back: with
``working-tree-encoding=UTF-16LE`` a blob is stored as UTF-8 and written re-encoded,
so an ASCII file that its pusher declared UTF-16LE is stored as CJK characters and
written back, in every clone, as the ASCII it was. ``export-subst`` makes ``git
archive`` expand ``$Format:...$`` (``%x67`` is a ``g``). Both are read from the
commit's own attribute files, so they are judged here as the commit's checkout (or
archive) writes them, besides the bytes git stores; the attributes that could hide
content from git's diff are switched off elsewhere (``diffparse.git_command``).

Almost no repository sets these attributes, so whether any commit of a batch may is
asked first, cheaply: whether an attribute file of the trees the batch starts from
(``git grep`` on its parents outside it) or a line the batch adds to one names them.
Only then is each commit's tree read into a scratch index and asked of ``git
check-attr``, as a checkout would ask.
"""

from __future__ import annotations

import codecs
import re
from pathlib import Path

from spillguard.core.errors import GitError
from spillguard.core.models import is_zero_id
from spillguard.core.values import Frozen, fill, replace
from spillguard.sources.attributes import ATTRIBUTES
from spillguard.sources.blobdiff import text_added
from spillguard.sources.diffparse import fragments, lines_by_number
from spillguard.sources.gitcli import run_git
from spillguard.sources.staged_cli import blob_contents

TYPE_CHECKING = False  # typing's, without importing typing (a hook's start-up); mypy reads it alike
if TYPE_CHECKING:
    from collections.abc import Iterator, Sequence

    from spillguard.core.models import CommitInfo, Fragment
    from spillguard.sources.staged_cli import Staged


class Written(Frozen):
    """How a checkout writes one file: re-encoded (``encoding``), expanded (``subst``)."""

    __slots__ = ("encoding", "subst")

    encoding: str | None
    subst: bool

    def __init__(self, encoding: str | None = None, subst: bool = False) -> None:
        fill(self, locals())


_AS_STORED = Written()


class Change(Frozen):
    """A file a commit changed: its path and its blobs before and after (None: none)."""

    __slots__ = ("new", "old", "path")

    path: str
    old: str | None
    new: str | None

    def __init__(self, *, path: str, old: str | None, new: str | None) -> None:
        fill(self, locals())


class Checkouts:
    """Each commit's files as its checkout writes them, read by git on demand."""

    def __init__(self, git_dir: str) -> None:
        self._git_dir = git_dir
        self._trees: dict[str, tuple[dict[str, str], dict[str, Written]]] = {}

    def items(
        self,
        commit: str,
        parent: str | None,
        changes: Sequence[Change],
        info: CommitInfo | None,
        ref: str | None,
    ) -> Iterator[Fragment]:
        """The lines the commit's checkout adds to its parent's (as each writes them)
        that git's stored bytes do not show: the changed files written otherwise, and
        every file whose writing the commit's attributes changed."""
        blobs, written = self._tree(commit)
        old_blobs, old_written = self._tree(parent) if parent is not None else ({}, {})
        paths = {change.path for change in changes if change.new is not None}
        paths |= {
            path
            for path in set(written) | set(old_written)
            if written.get(path, _AS_STORED) != old_written.get(path, _AS_STORED)
        }
        wanted = {
            path
            for path in paths
            if path in blobs
            and (written.get(path, _AS_STORED) != _AS_STORED or old_written.get(path) is not None)
        }
        if not wanted:
            return
        names = {blobs[path] for path in wanted} | {
            old_blobs[path] for path in wanted if path in old_blobs
        }
        contents = blob_contents(self._git_dir, sorted(names)) or {}
        for path in sorted(wanted):
            stored = contents.get(blobs[path])
            if stored is None:
                continue
            new = self._write(commit, stored, written.get(path, _AS_STORED))
            old_stored = contents.get(old_blobs[path]) if path in old_blobs else None
            old = (
                None
                if old_stored is None
                else self._write(parent or commit, old_stored, old_written.get(path, _AS_STORED))
            )
            yield from fragments(path, _new_lines(old, new, stored), info, ref)

    def _write(self, commit: str, stored: bytes, written: Written) -> bytes:
        data = stored
        if written.subst:
            data = _expanded(self._git_dir, commit, data)
        if written.encoding is not None:
            data = reencoded(data, written.encoding)
        return data

    def _tree(self, commit: str) -> tuple[dict[str, str], dict[str, Written]]:
        """The commit's files (path -> blob) and how its checkout writes those that are
        not written as stored, asked of git as a checkout of it asks."""
        if commit not in self._trees:
            self._trees.clear()  # a commit and its parent are all that is asked again
            self._trees[commit] = _read_tree(self._git_dir, commit)
        return self._trees[commit]


def _new_lines(old: bytes | None, new: bytes, stored: bytes) -> dict[int, bytes]:
    """The lines ``new`` adds to ``old`` that are not the stored file's own lines
    (those are judged as stored already)."""
    added = text_added(old, new)
    if not added:
        return {}
    own = lines_by_number(stored)
    return {number: line for number, line in added.items() if own.get(number) != line}


def _read_tree(git_dir: str, commit: str) -> tuple[dict[str, str], dict[str, Written]]:
    """The commit's regular files (path -> blob) and the writing of those a checkout
    converts: its tree read into a scratch index, its attribute files asked of git
    (no system or user attribute file: a clone's checkout has the commit's alone)."""
    import tempfile  # here: a commit whose attributes convert nothing never needs it

    with tempfile.TemporaryDirectory(prefix="spillguard-attributes-") as scratch:
        also = {"GIT_INDEX_FILE": str(Path(scratch, "index")), "GIT_ATTR_NOSYSTEM": "1"}
        base = (f"--git-dir={git_dir}", "-c", f"core.attributesFile={scratch}/absent")
        listed = None
        if run_git(*base, "read-tree", commit, also=also) is not None:
            listed = run_git(*base, "ls-files", "-s", "-z", also=also)
        if listed is None:
            raise GitError(f"git could not read the tree of commit {commit}")
        blobs = {}
        for entry in filter(None, listed.split(b"\0")):
            fields, _, path = entry.partition(b"\t")
            mode, blob, *_ = fields.split(b" ")
            if mode.startswith(b"100"):  # regular files; a checkout converts nothing else
                blobs[path.decode("utf-8", "surrogateescape")] = blob.decode()
        asked = "".join(f"{path}\0" for path in blobs).encode("utf-8", "surrogateescape")
        answered = run_git(
            *base, "check-attr", "--cached", "-z", "--stdin", *ATTRIBUTES, stdin=asked, also=also
        )
        if answered is None:
            raise GitError(f"git could not read the attributes of commit {commit}")
    return blobs, _written(answered)


def _written(answered: bytes) -> dict[str, Written]:
    """``git check-attr -z``'s answers (path, attribute, value) as each file's writing."""
    fields = answered.split(b"\0")
    found: dict[str, Written] = {}
    for at in range(0, len(fields) - 2, 3):
        path, attribute, value = (
            field.decode("utf-8", "surrogateescape") for field in fields[at : at + 3]
        )
        if value in ("unspecified", "unset"):
            continue
        written = found.get(path, _AS_STORED)
        if attribute == "export-subst":
            written = replace(written, subst=value == "set")
        elif value != "set":
            written = replace(written, encoding=value)
        found[path] = written
    return {path: written for path, written in found.items() if written != _AS_STORED}


#: git's own names that Python spells otherwise.
_CODECS = {"utf-16le-bom": "utf-16", "utf-32le-bom": "utf-32"}


def reencoded(data: bytes, encoding: str) -> bytes:
    """A stored (UTF-8) blob as a checkout writes it in ``encoding``; as it is where git
    could not convert it either (not UTF-8, or an encoding no codec knows)."""
    name = _CODECS.get(encoding.lower(), encoding)
    try:
        codecs.lookup(name)
        return data.decode("utf-8").encode(name)
    except (LookupError, UnicodeError):
        return data


_FORMAT = re.compile(rb"\$Format:([^$\n]*)\$")
#: Between the placeholders of one blob, in git's output: no format writes it.
_SEPARATOR = "\x1espillguard-export-subst\x1e"


def _expanded(git_dir: str, commit: str, data: bytes) -> bytes:
    """``$Format:...$`` expanded as ``git archive`` expands it (git's pretty formats)."""
    formats = [
        match.group(1).decode("utf-8", "surrogateescape") for match in _FORMAT.finditer(data)
    ]
    if not formats:
        return data
    output = run_git(
        f"--git-dir={git_dir}",
        "log",
        "-1",
        "--no-show-signature",
        f"--format={_SEPARATOR.join(formats)}",
        commit,
    )
    if output is None:  # no commit yet (the index): what does not depend on one
        output = _SEPARATOR.join(map(_without_commit, formats)).encode("utf-8", "surrogateescape")
    values = iter(output.removesuffix(b"\n").split(_SEPARATOR.encode()))
    return _FORMAT.sub(lambda _: next(values, b""), data)


_PLACEHOLDER = re.compile(r"%(?:x([0-9a-fA-F]{2})|(n)|(%)|\([^)]*\)|[a-zA-Z][a-zA-Z]?)")


def _without_commit(form: str) -> str:
    """A pretty format's expansion where no commit is there yet: ``%xNN``, ``%n`` and
    ``%%`` as git writes them, every placeholder of the commit left out."""

    def placeholder(match: re.Match[str]) -> str:
        byte, newline, percent = match.groups()
        if byte:
            return chr(int(byte, 16))
        return "\n" if newline else percent or ""

    return _PLACEHOLDER.sub(placeholder, form)


def staged_items(staged: Staged) -> Iterator[Fragment]:
    """The staged changes as a checkout of the index writes them (the pre-commit hook),
    where its attribute files or ``HEAD``'s may make it write otherwise."""
    if staged.trees is None or not staged.checkout_named():
        return
    git_dir, head, index = staged.trees
    changes = [
        Change(path=path, old=None if is_zero_id(file.old_id) else file.old_id, new=file.new_id)
        for path, file, _ in staged.files
    ]
    yield from Checkouts(git_dir).items(index, head, changes, None, None)
