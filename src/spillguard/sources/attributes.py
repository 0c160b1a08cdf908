"""Whether a tree's attribute files name an attribute that makes its checkout differ
from what git stores (``working-tree-encoding``, ``export-subst``): asked cheaply,
before ``sources.checkout`` reads any commit as its checkout writes it."""

from __future__ import annotations

from spillguard.sources.gitcli import Started

TYPE_CHECKING = False  # typing's, without importing typing (a hook's start-up); mypy reads it alike
if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence

#: The attributes whose checkout (or archive) writes other bytes than git stores.
ATTRIBUTES = ("working-tree-encoding", "export-subst")
_NAMED = (b"working-tree-encoding", b"export-subst")
#: Every attribute file of a tree, at its root and in any directory.
_ATTRIBUTE_FILES = (":(glob).gitattributes", ":(glob)**/.gitattributes")


def is_attribute_file(path: bytes | str) -> bool:
    name = path if isinstance(path, str) else path.decode("utf-8", "surrogateescape")
    return name == ".gitattributes" or name.endswith("/.gitattributes")


def names_attributes(lines: Iterable[bytes]) -> bool:
    """Whether lines added to an attribute file name an attribute that changes a checkout."""
    return any(name in line for line in lines for name in _NAMED)


def attributes_asked(git_dir: str, trees: Sequence[str]) -> Started | None:
    """Ask git, in the background, whether an attribute file of these trees (or
    commits) names an attribute that makes a checkout differ (``named``)."""
    if not trees:
        return None
    # Its pack maps are left unbounded: bounded as the diffs' are, git/git's 70 trees
    # before a chunk took 0.16 CPU-s instead of 0.07 (for a map of 57 MB, not 33, that
    # lasts as long).
    return Started(
        f"--git-dir={git_dir}",
        "grep",
        "-q",
        "-E",
        "working-tree-encoding|export-subst",
        *trees,
        "--",
        *_ATTRIBUTE_FILES,
    )


def named(asked: Started | None) -> bool:
    """git's answer to ``attributes_asked``: True also where git could not tell (the
    exact reading then decides)."""
    return asked is not None and asked.code() != 1  # 1: no attribute file names one
