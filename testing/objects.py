"""git objects written by hand, byte for byte, as loose objects of a repository.

A hostile pusher does not need git's porcelain: any bytes hashed as a commit, tree,
tag or blob are stored and pushed as they are (no fsck on a default server). Writing
them here costs no process, so a test can build hundreds of them for one push.
"""

from __future__ import annotations

import hashlib
import zlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence
    from pathlib import Path

#: A tree entry: (mode as git writes it, name, object id).
Entry = tuple[str, bytes, str]
PERSON = b"Ada Tester <ada@example.com> 1700000000 +0000"


class Objects:
    """Writes objects into ``git_dir/objects`` (SHA-1 or SHA-256, as the repository)."""

    def __init__(self, git_dir: Path, object_format: str = "sha1") -> None:
        self.git_dir = git_dir
        self.object_format = object_format

    def write(self, kind: str, body: bytes) -> str:
        """Store ``body`` as an object of ``kind`` (any bytes: git's parsers are not asked)."""
        raw = kind.encode() + b" " + str(len(body)).encode() + b"\0" + body
        object_id = hashlib.new(self.object_format, raw).hexdigest()
        path = self.git_dir / "objects" / object_id[:2] / object_id[2:]
        path.parent.mkdir(parents=True, exist_ok=True)
        if not path.exists():
            path.write_bytes(zlib.compress(raw))
        return object_id

    def blob(self, data: bytes | str) -> str:
        return self.write("blob", data.encode() if isinstance(data, str) else data)

    def tree(self, entries: Iterable[Entry], *, ordered: bool = True) -> str:
        """A tree of ``entries``, in git's order unless ``ordered`` is False (then as given)."""
        listed = list(entries)
        if ordered:
            listed.sort(key=lambda entry: entry[1] + (b"/" if entry[0] == "40000" else b""))
        return self.write(
            "tree",
            b"".join(
                mode.encode() + b" " + name + b"\0" + bytes.fromhex(object_id)
                for mode, name, object_id in listed
            ),
        )

    def commit(  # noqa: PLR0913 - the fields of a commit, each a test's to set
        self,
        tree: str,
        parents: Sequence[str] = (),
        message: bytes | str = b"change\n",
        *,
        headers: bytes = b"",
        author: bytes = PERSON,
        committer: bytes = PERSON,
    ) -> str:
        """A commit; ``headers`` (whole lines) go after the committer, as git puts
        ``encoding``, ``mergetag`` and ``gpgsig``."""
        text = message.encode() if isinstance(message, str) else message
        body = b"tree " + tree.encode() + b"\n"
        body += b"".join(b"parent " + parent.encode() + b"\n" for parent in parents)
        body += b"author " + author + b"\ncommitter " + committer + b"\n" + headers
        return self.write("commit", body + b"\n" + text)

    def tag(  # noqa: PLR0913 - the fields of a tag
        self,
        target: str,
        kind: str,
        name: bytes | str,
        message: bytes | str = b"release\n",
        *,
        headers: bytes = b"",
        tagger: bytes = PERSON,
    ) -> str:
        """An annotated tag of ``target`` (an object of ``kind``); ``headers`` after the tagger."""
        text = message.encode() if isinstance(message, str) else message
        label = name.encode() if isinstance(name, str) else name
        body = b"object " + target.encode() + b"\ntype " + kind.encode() + b"\n"
        body += b"tag " + label + b"\ntagger " + tagger + b"\n" + headers
        return self.write("tag", body + b"\n" + text)


def blob_entry(name: str | bytes, object_id: str) -> Entry:
    return ("100644", name.encode() if isinstance(name, str) else name, object_id)


def tree_entry(name: str | bytes, object_id: str) -> Entry:
    return ("40000", name.encode() if isinstance(name, str) else name, object_id)
