"""Every object a push carries, and those no pushed ref reaches.

While pre-receive runs, git keeps what a push brings in a quarantine directory
(``GIT_QUARANTINE_PATH``); once the push is accepted every object there is stored,
and anyone can fetch one by its id, whether a ref reaches it or not. A client's
``info/grafts`` line, say, makes ``git push`` send the fake parent it names, holding
whatever it holds, while the pushed commit names its real parents. So the objects
are listed from the quarantine alone, and those that neither a pushed ref reaches
(as ``git rev-list --objects`` walks them) nor the repository had already are named.
The push's readers note what they found reached on their way (the commits git
listed, the trees and blobs their trees name): where that is every object of the
quarantine, as in any push a git client makes, git is not asked to walk it again.
Without a quarantine (the hook run by hand) the push's objects are the ones its tips
reach that no ref reached.
"""

from __future__ import annotations

import functools
import os

from spillguard.sources.diffparse import common_dir
from spillguard.sources.gitcli import git_output

TYPE_CHECKING = False  # typing's, without importing typing (a hook's start-up); mypy reads it alike
if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping, Sequence


class Carried:
    """The objects a push to ``tips`` (its updates' new ids) brings, each answer asked
    of git when first wanted: a push that fails to read still keeps what was judged."""

    def __init__(
        self, git_dir: str, tips: Sequence[str], environ: Mapping[str, str] = os.environ
    ) -> None:
        self._git_dir = git_dir
        self._tips = tips
        self._quarantine = environ.get("GIT_QUARANTINE_PATH")
        self._env = {**environ, "GIT_NO_REPLACE_OBJECTS": "1"}  # objects as stored
        #: Objects the readers of the push found reached, as git reads the objects
        #: that reach them (``account``).
        self._accounted: set[str] = set()

    def account(self, ids: Iterable[str]) -> None:
        """Note objects a pushed ref reaches, as git's own parsers read them (the listed
        commits, their root trees, a tree's subtrees and blobs): when every object
        of the quarantine is among them, git need not walk the push again."""
        self._accounted.update(ids)

    @functools.cached_property
    def kinds(self) -> dict[str, str]:
        """Every object the push brings, by id: its type, in git's order."""
        if not self._quarantine:
            return _kinds(self._git_dir, self._reached, self._env)
        alone = {**self._env, "GIT_OBJECT_DIRECTORY": self._quarantine}
        alone.pop("GIT_ALTERNATE_OBJECT_DIRECTORIES", None)
        every = ("cat-file", "--batch-all-objects", "--batch-check", "--unordered")
        return _parsed(git_output(self._git_dir, *every, env=alone))

    def quarantined_trees(self) -> list[str] | None:
        """The trees the quarantine holds; None without a quarantine (``kinds`` then
        walks the push, which may fail where an object is missing: ask it later)."""
        if not self._quarantine:
            return None
        return [object_id for object_id, kind in self.kinds.items() if kind == "tree"]

    @functools.cached_property
    def unreached(self) -> tuple[str, ...]:
        """Those no pushed ref reaches and the repository did not have before the push."""
        if not self._quarantine:
            return ()
        left = [object_id for object_id in self.kinds if object_id not in self._accounted]
        if left:  # git's walk settles it: whatever the readers left unread
            known = set(self._reached)
            left = [object_id for object_id in left if object_id not in known]
        return tuple(_new(self._git_dir, left, self._env)) if left else ()

    @functools.cached_property
    def _reached(self) -> list[str]:
        """What the pushed tips reach that no ref reached, as git walks it."""
        if not self._tips:
            return []
        listing = ("rev-list", "--objects", "--no-object-names", "--stdin", "--not", "--all")
        given = "".join(f"{tip}\n" for tip in self._tips).encode()
        return (
            git_output(self._git_dir, *listing, "--", stdin=given, env=self._env).decode().split()
        )


def _kinds(git_dir: str, ids: Sequence[str], env: Mapping[str, str]) -> dict[str, str]:
    """The type of each of ``ids``."""
    if not ids:
        return {}
    asked = "".join(f"{object_id}\n" for object_id in ids).encode()
    return _parsed(git_output(git_dir, "cat-file", "--batch-check", stdin=asked, env=env))


def _new(git_dir: str, ids: Sequence[str], env: Mapping[str, str]) -> list[str]:
    """The ids the repository's own store (not the quarantine) lacks: a thin pack's
    bases, which git adds to the pack it receives, are not the push's."""
    stored = {**env, "GIT_OBJECT_DIRECTORY": str(common_dir(git_dir) / "objects")}
    for name in ("GIT_ALTERNATE_OBJECT_DIRECTORIES", "GIT_QUARANTINE_PATH"):
        stored.pop(name, None)
    asked = "".join(f"{object_id}\n" for object_id in ids).encode()
    told = git_output(git_dir, "cat-file", "--batch-check", stdin=asked, env=stored)
    return [line.split()[0] for line in told.decode().splitlines() if line.endswith(" missing")]


def _parsed(output: bytes) -> dict[str, str]:
    """``<id> <type> <size>`` lines as {id: type}."""
    kinds = {}
    for line in output.decode().splitlines():
        fields = line.split(" ")
        if len(fields) == len(("id", "type", "size")):
            kinds[fields[0]] = fields[1]
    return kinds
