"""Sources of content: each yields Fragments (text to judge) and Skipped entries."""

from __future__ import annotations

from collections.abc import Iterator

from spillguard.models import Fragment, Skipped

#: What every source yields: a fragment to judge, or an input left out on purpose.
SourceItem = Fragment | Skipped
Source = Iterator[SourceItem]

__all__ = ["Source", "SourceItem"]
