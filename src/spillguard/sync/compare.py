"""The server's own scan result of a branch, and how it compares with a local scan.

A finding of the server (an item of ``invalidLines``) carries the line, the offsets
of the match in it, counted in UTF-16 code units as Java counts them, and whether
the line was cut to the match. It names no path and no rule, so two findings are the
same when their line and their matched text are: that is what both sides compare.
"""

from __future__ import annotations

import dataclasses
import time
from typing import TYPE_CHECKING, Any

from spillguard.core.errors import SyncError

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable

    from spillguard.core.models import Finding
    from spillguard.sync.http import ClientSettings

#: Findings asked for per page (the server's own default).
PAGE = 100
#: Pages followed at most: a server that never stops fails the comparison.
MAX_PAGES = 1000
#: (line, matched text): a finding as both sides can name it.
Key = tuple[str, str]


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class ServerScan:
    keys: tuple[Key, ...]
    #: Whether the result is for the branch's latest commit (None: not said).
    actual: bool | None


def _utf16_slice(text: str, start: int, end: int) -> str:
    """``text[start:end]`` with Java's indexes (UTF-16 code units)."""
    units = text.encode("utf-16-le")
    return units[2 * start : 2 * end].decode("utf-16-le", "replace")


def server_key(item: Any, where: str) -> Key:
    """An ``invalidLines`` item as (line, matched text)."""
    if not isinstance(item, dict) or not isinstance(item.get("text"), str):
        raise SyncError(f"{where}: a finding without its text")
    text = item["text"]
    start, end = item.get("lineOffsetStart"), item.get("lineOffsetEnd")
    if not isinstance(start, int) or not isinstance(end, int):
        return text, text  # no offsets: the text is all there is to compare
    return text, _utf16_slice(text, start, end)


def local_key(finding: Finding) -> Key:
    return finding.text, finding.match_text


def _page(payload: Any, where: str, branch: str) -> list[Any]:
    if not isinstance(payload, dict):
        raise SyncError(f"{where}: the scan result is not a JSON object")
    if payload.get("scanned") is False:
        state = "running" if payload.get("running") else "not scanned"
        raise SyncError(
            f"{where}: the server has no scan result for branch {branch} ({state}); "
            "start one on the server, then compare again"
        )
    lines = payload.get("invalidLines", [])
    if not isinstance(lines, list):
        raise SyncError(f"{where}: invalidLines is not a list")
    return lines


def fetch_scan(
    settings: ClientSettings,
    path: str,
    branch: str | None,
    *,
    sleep: Callable[[float], None] = time.sleep,
) -> ServerScan:
    """Every finding of the server's scan of ``branch`` (None: its default branch), paged.

    The latest release line pages ``invalidLines`` with start and limit; older ones
    send them all and ignore both, so a page that repeats the previous one ends it.
    """
    from urllib.parse import urlencode

    from spillguard.sync.fetch import json_answer
    from spillguard.sync.http import Call, request
    from spillguard.sync.limits import MAX_ITEMS, check_count

    found: list[Any] = []
    previous: list[Any] | None = None
    actual: bool | None = None
    shown = branch or "(the default branch)"
    for _ in range(MAX_PAGES):
        query = {**({"branch": branch} if branch else {}), "start": len(found), "limit": PAGE}
        call = Call(method="GET", path=f"{path}?{urlencode(query)}")
        payload = json_answer(request(settings, call, sleep=sleep), call, settings.secrets)
        lines = _page(payload, call.where, shown)
        if lines == previous:
            break
        actual = payload.get("actual") if isinstance(payload.get("actual"), bool) else None
        found.extend(lines)
        check_count(len(found), MAX_ITEMS, "invalid lines in the scan result", f"GET {path}")
        if len(lines) < PAGE:
            break
        previous = lines
    else:
        raise SyncError(f"GET {path}: the scan result has more than {MAX_PAGES} pages")
    return ServerScan(keys=tuple(server_key(item, f"GET {path}") for item in found), actual=actual)


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class Comparison:
    only_server: tuple[Key, ...]
    only_local: tuple[Finding, ...]
    server_count: int
    local_count: int

    @property
    def agree(self) -> bool:
        return not self.only_server and not self.only_local


def compare(server: Iterable[Key], local: Iterable[Finding]) -> Comparison:
    """Distinct findings on each side, and those the other side lacks."""
    server_keys = dict.fromkeys(server)
    local_by_key: dict[Key, Finding] = {}
    for finding in local:
        local_by_key.setdefault(local_key(finding), finding)
    return Comparison(
        only_server=tuple(key for key in server_keys if key not in local_by_key),
        only_local=tuple(f for key, f in local_by_key.items() if key not in server_keys),
        server_count=len(server_keys),
        local_count=len(local_by_key),
    )
