"""Sources of content: each yields Fragments (text to judge) and Skipped entries."""

from __future__ import annotations

from collections.abc import Iterator

from spillguard.core.models import CommitWalked, Fragment, Skipped

#: What every source yields: a fragment to judge, an input left out on purpose, or
#: the mark of a commit walked (so that commits adding no line are counted too).
SourceItem = Fragment | Skipped | CommitWalked
Source = Iterator[SourceItem]

__all__ = ["Source", "SourceItem"]
