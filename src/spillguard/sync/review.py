"""``spillguard review add|remove --remote``: mark or unmark a string on the server.

The create body carries ``ruleName`` where the variant takes it. Code-hosting
release lines differ: the last sync recorded whether the server's reviewed lines
have a rule name; without a sync, a create with ``ruleName`` that the server
refuses (400) is sent once more without it. ``ruleName`` is the server's own
spelling of the rule, from the cache or, without one, from the rule list. On success
the local cache is updated too, so the next scan honours the change before the next
sync.
"""

from __future__ import annotations

import dataclasses
import os
import time
from typing import TYPE_CHECKING, Any

from spillguard.configuration.sync_cache import cache_path, read_cache_data, write_cache
from spillguard.core.errors import ConfigError, SyncError, UsageError
from spillguard.detection.fingerprint import reviewed_digest
from spillguard.sync.http import Call, ClientSettings, request
from spillguard.sync.rules import rule_name
from spillguard.sync.settings import Target, merged_settings, target
from spillguard.sync.variants import expand

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from pathlib import Path

BAD_REQUEST = 400
#: The documents show no answer body for these operations: JSON preferred, any accepted
#: (a strict server answers 406 to an Accept it cannot meet, after doing nothing).
REVIEW_ACCEPT = "application/json, */*;q=0.1"


def _same_target(data: Mapping[str, Any], chosen: Target) -> bool:
    return (
        data.get("server") == chosen.client.server.rstrip("/")
        and data.get("variant") == chosen.variant.name
        and data.get("scope") == chosen.scope
    )


def _cached(chosen: Target, path: Path) -> dict[str, Any] | None:
    """The cache when it was synced from this very server and scope."""
    if not path.is_file():
        return None
    try:
        data = read_cache_data(path)
    except ConfigError:
        return None
    return data if _same_target(data, chosen) else None


def _server_rule_name(rule: str, cached: Mapping[str, Any] | None) -> str:
    for item in (cached or {}).get("rules", ()):
        if item.get("name") == rule_name(rule) and item.get("server_name"):
            return str(item["server_name"])
    return rule


def _live_rules(chosen: Target, sleep: Callable[[float], None]) -> dict[str, Any] | None:
    """The server's rule names, when no cache tells how the server spells ``--rule``."""
    from spillguard.sync.fetch import json_answer
    from spillguard.sync.rules import items_of

    path = expand(chosen.variant.rules, chosen.scope)
    call = Call(method="GET", path=path, permission=chosen.variant.rules_permission)
    try:
        answer = request(chosen.client, call, sleep=sleep)
        items = items_of(json_answer(answer, call, chosen.client.secrets), "rule list")
    except SyncError:
        return None  # the name is sent as given
    named = [item for item in items if isinstance(item, dict) and isinstance(item.get("name"), str)]
    return {
        "rules": [{"name": rule_name(item["name"]), "server_name": item["name"]} for item in named]
    }


def _create_body(
    chosen: Target, text: str, rule: str | None, cached: Mapping[str, Any] | None
) -> tuple[dict[str, str], bool]:
    """The create body, and whether a 400 should be retried without ``ruleName``.

    ``cached`` holds the rules the server spells ``rule`` by (the cache, or a fresh list).
    """
    takes_rule = chosen.variant.review_rule_name
    if takes_rule is None and cached is not None:
        takes_rule = (cached.get("release_line") or {}).get("review_rule_name")
    if takes_rule and rule is None:
        raise UsageError(f"the {chosen.variant.name} variant's reviewed lines need --rule NAME")
    if rule is None or takes_rule is False:
        return {"matchText": text}, False
    return {"matchText": text, "ruleName": _server_rule_name(rule, cached)}, takes_rule is None


def _post(
    client: ClientSettings, call: Call, sleep: Callable[[float], None], fallback: bool
) -> None:
    try:
        request(client, call, sleep=sleep)
    except SyncError as error:
        if not (fallback and f"HTTP {BAD_REQUEST} " in str(error)):
            raise
        body = {"matchText": call.body["matchText"]}
        retry = dataclasses.replace(call, body=body)
        request(client, retry, sleep=sleep)


def _update_cache(path: Path, data: dict[str, Any], text: str, rule: str | None, add: bool) -> None:
    digest = reviewed_digest(text, str(data.get("salt", "")))
    kept = [entry for entry in data.get("reviewed", ()) if entry.get("digest") != digest]
    if add:
        kept.append({"digest": digest, "rule": rule_name(rule) if rule else None})
    data["reviewed"] = kept
    data.pop("version", None)
    write_cache(path, data)


def _last_sync(path: Path) -> dict[str, Any]:
    """The server, variant and scope of the last sync, as ``[sync]`` keys."""
    try:
        data = read_cache_data(path)
    except ConfigError:
        return {}
    scope = data.get("scope")
    found = {"server": data.get("server"), "variant": data.get("variant")}
    found.update(scope if isinstance(scope, dict) else {})
    return {key: value for key, value in found.items() if value}


def remote_review(  # noqa: PLR0913 - keyword-only parts of one operation
    *,
    add: bool,
    text: str,
    rule: str | None,
    root: str,
    configured: Mapping[str, Any],
    sleep: Callable[[float], None] = time.sleep,
) -> str:
    """Create (``add``) or delete a reviewed line on the server; returns what was done.

    The server is the one ``[sync]`` names, else the one of the last sync.
    """
    path = cache_path(root, os.environ)
    chosen = target(merged_settings({**_last_sync(path), **configured}, {}), os.environ)
    if chosen.variant.review is None:
        raise UsageError(f"the {chosen.variant.name} API documents no reviewed-line operations")
    cached = _cached(chosen, path)
    base = expand(chosen.variant.review, chosen.scope)
    if add:
        known = cached
        if known is None and rule is not None and chosen.variant.review_rule_name is not False:
            known = _live_rules(chosen, sleep)
        body, fallback = _create_body(chosen, text, rule, known)
        action = "create"
    else:
        fallback, body, action = False, {"matchText": text}, "delete"
    call = Call(
        method="POST",
        path=f"{base}/{action}",
        body=body,
        accept=REVIEW_ACCEPT,
        permission=chosen.variant.review_permission,
    )
    _post(chosen.client, call, sleep, fallback)
    if cached is not None:
        _update_cache(path, cached, text, rule, add)
    done = "marked as reviewed" if add else "no longer reviewed"
    return f"{done} on {chosen.client.server} ({chosen.variant.name})" + (
        "; the local cache is updated" if cached is not None else "; run spillguard sync"
    )
