"""Commits, tags and trees as git stores them, parsed as git parses them, as text to judge.

``git log`` shows a rendering: ``%B`` ends at a NUL, a message that names its
encoding is re-encoded, a tag read into fields keeps one of each. A clone receives
the objects themselves, so here each one's bytes are read as git's own parsers read
them (``commit.c``, ``tag.c``, ``tree-walk.c``): header lines up to the first empty
line (a line that starts with a space continues the one before it, as in ``gpgsig``
and ``mergetag``), then the message, all of it, NULs and all.

What is judged, each with its pseudo-path and with line numbers as in ``git
cat-file -p``: a commit's message (``<commit message>``, counted from its first
line), its author and committer (``<commit author>``, lines 1 and 2), and every
other header line but its well-formed ``tree`` and ``parent`` lines (``<commit
header>``); a tag's message (``<tag message>``) and every header line but its first
``object`` and ``type`` (``<tag header>``: the tag's name, its tagger, any other);
under an ``encoding`` header, both the stored bytes and the text decoded from that
encoding. A tree's entry names are judged by ``sources.names``.
"""

from __future__ import annotations

import codecs

from spillguard.sources.diffparse import commit_info_from, fragments, seconds

TYPE_CHECKING = False  # typing's, without importing typing (a hook's start-up); mypy reads it alike
if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

    from spillguard.core.models import CommitInfo, Fragment

COMMIT_MESSAGE = "<commit message>"
#: Line 1 the author's ``Name <email> TIME ZONE``, line 2 the committer's.
COMMIT_AUTHOR = "<commit author>"
COMMIT_HEADER = "<commit header>"
TAG_MESSAGE = "<tag message>"
TAG_HEADER = "<tag header>"
#: A tree's entry names (``sources.names``) and the names of the refs a push creates.
PATH_NAME = "<path name>"
REF_NAME = "<ref name>"
#: A blob no pushed ref reaches, judged whole (``on_unreachable = "judge"``).
UNREACHED_BLOB = "<unreached blob>"
PSEUDO_PATHS = frozenset(
    {
        COMMIT_MESSAGE,
        COMMIT_AUTHOR,
        COMMIT_HEADER,
        TAG_MESSAGE,
        TAG_HEADER,
        PATH_NAME,
        REF_NAME,
        UNREACHED_BLOB,
    }
)

#: A SHA-1's and a SHA-256's hex digits.
_ID_LENGTHS = (40, 64)
#: The encodings git leaves as they are (``same_encoding``: UTF-8 under either name).
_UTF8 = frozenset({"utf-8", "utf8"})


def parse(data: bytes) -> tuple[dict[int, bytes], bytes]:
    """An object's header lines by their line number (from 1, each with its newline),
    up to the first empty line, and the message after it (none when the object has no
    empty line: git reads it all as headers)."""
    head, blank, message = data.partition(b"\n\n")
    if not blank and head.endswith(b"\n"):
        head = head[:-1]
    lines = head.split(b"\n") if head else []
    return {number: line + b"\n" for number, line in enumerate(lines, start=1)}, message


def _key(line: bytes) -> bytes:
    return line.partition(b" ")[0]


def _well_formed(line: bytes, key: bytes) -> bool:
    """``KEY <object id>`` and nothing else: a line that names an object git reads."""
    value = line[len(key) + 1 : -1]
    return (
        line.startswith(key + b" ")
        and len(value) in _ID_LENGTHS
        and not value.strip(b"0123456789abcdef")
    )


def commit_tree(data: bytes) -> str | None:
    """The tree a commit names on its first line, as git reads it; None if it names none."""
    first = data.partition(b"\n")[0] + b"\n"
    return first[5:-1].decode() if _well_formed(first, b"tree") else None


def commit_items(
    object_id: str, data: bytes, info: CommitInfo | None, ref: str | None
) -> Iterator[Fragment]:
    """What a commit stores, as fragments: its message, author and committer, and its
    other headers, in the stored bytes and (under an ``encoding`` header) decoded.

    ``info`` is the commit as the listing described it; None makes one from the bytes.
    """
    headers, message = parse(data)
    lines = list(headers.items())
    # commit.c: the tree on the first line, then the parents, in a row
    skip = 1 if lines and _well_formed(lines[0][1], b"tree") else 0
    while skip < len(lines) and _well_formed(lines[skip][1], b"parent"):
        skip += 1
    people: dict[int, bytes] = {}  # the first author (line 1) and committer (line 2)
    others: dict[int, bytes] = {}
    for number, line in lines[skip:]:
        role = _ROLES.get(_key(line))
        if role is not None and role not in people:
            people[role] = line.partition(b" ")[2]
        else:
            others[number] = line
    if info is None:
        info = _info(object_id, people, message)
    texts = {COMMIT_MESSAGE: {1: message}, COMMIT_AUTHOR: people, COMMIT_HEADER: others}
    yield from _judged(texts, others, info, ref)


#: Where the author and the committer go in ``<commit author>``.
_ROLES = {b"author": 1, b"committer": 2}


def _judged(
    texts: dict[str, dict[int, bytes]],
    headers: dict[int, bytes],
    info: CommitInfo,
    ref: str | None,
) -> Iterator[Fragment]:
    """The fragments of each pseudo-path's lines as stored, then the lines an
    ``encoding`` header's decoding reads otherwise (none that read the same)."""
    decoded = _decoder(headers)
    for path, lines in texts.items():
        kept = {number: line for number, line in lines.items() if line}
        yield from fragments(path, kept, info, ref)
        if decoded is not None:
            other = {n: text for n, line in kept.items() if (text := decoded(line)) != line}
            yield from fragments(path, other, info, ref)


def tag_target(data: bytes) -> tuple[str, str] | None:
    """The type and id of the object a tag names, as git reads them: its first line
    ``object ID``, its second ``type TYPE`` (a second pair further on is not read)."""
    lines = data.split(b"\n", 2)
    if len(lines) < 2 or not _well_formed(lines[0] + b"\n", b"object"):
        return None
    if not lines[1].startswith(b"type "):
        return None
    return lines[1][5:].decode("utf-8", "replace"), lines[0][7:].decode()


def tag_items(object_id: str, data: bytes, ref: str | None) -> Iterator[Fragment]:
    """What a tag stores, as fragments: its message and every header line but the
    first ``object`` and ``type`` lines git follows (its name, its tagger, any other)."""
    headers, message = parse(data)
    lines = list(headers.items())
    others = dict(lines[2:] if tag_target(data) is not None else lines)
    tagger = next((line for line in others.values() if _key(line) == b"tagger"), b"")
    name, email, when = person(tagger.partition(b" ")[2])
    info = commit_info_from(object_id, name, email, when, message)
    texts = {TAG_MESSAGE: {1: message}, TAG_HEADER: others}
    yield from _judged(texts, others, info, ref)


def person(value: bytes) -> tuple[bytes, bytes, int | None]:
    """``Name <email> 1700000000 +0000`` as (name, email, seconds)."""
    name, _, rest = value.partition(b" <")
    email, _, when = rest.partition(b">")
    return name, email, seconds(when.split()[0]) if when.split() else None


def _info(object_id: str, people: dict[int, bytes], message: bytes) -> CommitInfo:
    """A commit's details from its own bytes (one no listing described)."""
    name, email, when = person(people.get(1, b"").rstrip(b"\n"))
    committer = people.get(2, b"").partition(b">")[0] + b">"
    return commit_info_from(object_id, name, email, when, message, committer=committer)


def _decoder(headers: dict[int, bytes]) -> Callable[[bytes], bytes] | None:
    """Under an ``encoding`` header naming other than UTF-8, how git's re-encoding
    reads bytes (as UTF-8 bytes, which ``fragments`` reads); None otherwise, or when
    Python does not know the name (the stored bytes are judged all the same)."""
    named = next(
        (line[9:].strip() for line in headers.values() if line.startswith(b"encoding ")), None
    )
    if named is None or named.decode("ascii", "replace").lower() in _UTF8:
        return None
    try:
        found = codecs.lookup(named.decode("ascii", "replace"))
    except (LookupError, ValueError):
        return None
    # rot13, base64, zlib: codecs of bytes to bytes, none of which git's iconv knows
    if not found._is_text_encoding:  # noqa: SLF001 - codecs has no public test for it
        return None

    def decoded(data: bytes) -> bytes:
        try:
            return data.decode(found.name, "replace").encode("utf-8", "surrogatepass")
        except (UnicodeError, ValueError):  # idna and punycode raise whatever the errors
            return data

    return decoded
