"""Commit and annotated-tag messages as text to judge: every clone shows them.

A message is judged with the same rules as a file. Its findings carry a pseudo-path,
``<commit message>`` or ``<tag message>``, in every report; line numbers count from
the message's first line. A tag's finding names the tag object (its id in the
``commit`` field, its tagger as the author) and its ref. Tags are read from their
raw bytes (``sources.rawobjects``): every header line is judged too, and a tag of a
tag is followed as git follows it, by its first ``object`` line.
"""

from __future__ import annotations

from spillguard.core import gitcommand
from spillguard.core.models import Fragment
from spillguard.sources.gitcli import cat_objects
from spillguard.sources.rawobjects import (
    COMMIT_AUTHOR,
    COMMIT_MESSAGE,
    PSEUDO_PATHS,
    tag_items,
    tag_target,
)

TYPE_CHECKING = False  # typing's, without importing typing (a hook's start-up); mypy reads it alike
if TYPE_CHECKING:
    from collections.abc import Iterator, Sequence

    from spillguard.core.models import CommitInfo, Selection

#: The pseudo-paths of what git stores beside files: a scan's summary does not count
#: them as files.
MESSAGE_PATHS = PSEUDO_PATHS


def commit_message(info: CommitInfo, ref: str | None) -> list[Fragment]:
    """The commit's message as a fragment (none for an empty message), then who wrote
    and committed it: every ``git log`` shows these too."""
    people = f"{info.author} <{info.email}>\n{info.committer}\n"
    fragments = [Fragment(path=COMMIT_AUTHOR, text=people, commit=info, ref=ref)]
    if info.message.strip():
        fragments.insert(0, Fragment(path=COMMIT_MESSAGE, text=info.message, commit=info, ref=ref))
    return fragments


def tag_messages(path: str, tags: Sequence[tuple[str, str]]) -> Iterator[Fragment]:
    """What each annotated tag among ``tags`` (object id or name, ref) stores, its
    message and header lines (``rawobjects.tag_items``), read by one ``git cat-file
    --batch``, and of every tag a tag names; other objects are passed by."""
    pending = list(tags)
    seen: set[str] = set()
    while pending:
        batch, pending = pending, []
        for (_, ref), (tag_id, data) in zip(batch, _tags(path, batch), strict=True):
            if tag_id is None or tag_id in seen:
                continue
            seen.add(tag_id)
            yield from tag_items(tag_id, data, ref)
            target = tag_target(data)
            if target is not None and target[0] == "tag":
                pending.append((target[1], ref))


def selected_tags(path: str, selection: Selection) -> list[tuple[str, str]]:
    """The annotated tags a history selection names, as (name, ref) for ``tag_messages``:
    every tag with ``--all``, and each revision given by a plain name."""
    named = [
        (rev, rev) for rev in selection.revs if not rev.startswith(("^", "-")) and ".." not in rev
    ]
    if selection.all_refs:
        listed = _git(path, "for-each-ref", "--format=%(objecttype) %(objectname) %(refname)")
        for line in listed.decode("utf-8", "replace").splitlines():
            kind, object_id, ref = line.split(" ", 2)
            if kind == "tag":
                named.append((object_id, ref))
    return named


def _git(path: str, *args: str, stdin: bytes = b"") -> bytes:
    """git's output in the repository at ``path``; nothing when git fails or is missing
    (a revision that is no tag, say: the scan of commits reports bad revisions)."""
    try:
        completed = gitcommand.run(gitcommand.command("-C", path, *args), stdin=stdin)
    except FileNotFoundError:
        return b""
    return completed.stdout


def _tags(path: str, names: Sequence[tuple[str, str]]) -> list[tuple[str | None, bytes]]:
    """Each named object's id and content when it is a tag, else (None, b"")."""
    asked = [name for name, _ in names]
    output = _git(path, "cat-file", "--batch", stdin="".join(f"{n}\n" for n in asked).encode())
    found = cat_objects(output, asked)
    return [
        (found[name][0], found[name][2])
        if name in found and found[name][1] == "tag"
        else (None, b"")
        for name in asked
    ]
