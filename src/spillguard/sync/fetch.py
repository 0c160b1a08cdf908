"""Fetch everything a variant offers into the cache's form (see ``sync_cache``).

Nothing is written here: the caller writes the cache only once every request has
succeeded, so a failed sync leaves the previous cache as it was.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import secrets
import time
from typing import TYPE_CHECKING, Any

from spillguard.errors import SyncError
from spillguard.fingerprint import reviewed_digest
from spillguard.sync.export import reviewed_lines
from spillguard.sync.http import Call, ClientSettings, Response, request
from spillguard.sync.messages import excerpt
from spillguard.sync.rules import (
    parse_password_settings,
    parse_rules,
    repository_rule_names,
    rule_name,
)
from spillguard.sync.variants import Variant, expand

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

EXPORT_ACCEPT = "text/csv, application/zip, application/octet-stream;q=0.5"


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class Fetched:
    data: dict[str, Any]
    notices: tuple[str, ...]


def json_answer(response: Response, call: Call) -> Any:
    import json

    try:
        return json.loads(response.body.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        raise SyncError(
            f"{call.where}: the answer is not JSON ({response.content_type}): "
            f"{excerpt(response.body)}"
        ) from None


class _Fetcher:
    def __init__(
        self, settings: ClientSettings, chosen: Variant, sleep: Callable[[float], None]
    ) -> None:
        self.settings = settings
        self.variant = chosen
        self.sleep = sleep
        self.notices: list[str] = []

    def get(self, path: str, permission: str, accept: str = "application/json") -> Response:
        call = Call(method="GET", path=path, accept=accept, permission=permission)
        return request(self.settings, call, sleep=self.sleep)

    def get_json(self, path: str, permission: str) -> Any:
        call = Call(method="GET", path=path, permission=permission)
        return json_answer(request(self.settings, call, sleep=self.sleep), call)

    def reviewed(self, path: str, salt: str) -> tuple[list[dict[str, Any]], bool]:
        response = self.get(path, self.variant.reviewed_permission, EXPORT_ACCEPT)
        lines, has_rule = reviewed_lines(response.body, f"GET {path}")
        entries = {
            (reviewed_digest(text, salt), rule_name(rule) if rule else None) for text, rule in lines
        }
        return [{"digest": digest, "rule": rule} for digest, rule in sorted(entries, key=str)], (
            has_rule
        )


def fetch(
    settings: ClientSettings,
    chosen: Variant,
    scope: Mapping[str, str],
    *,
    builtin_names: frozenset[str],
    sleep: Callable[[float], None] = time.sleep,
) -> Fetched:
    """Rules, repository rule names, reviewed lines and settings, as the variant offers."""
    fetcher = _Fetcher(settings, chosen, sleep)
    synced = parse_rules(
        fetcher.get_json(expand(chosen.rules, scope), chosen.rules_permission), builtin_names
    )
    notices = list(synced.notices)
    salt = secrets.token_hex(16)
    data: dict[str, Any] = {
        "server": settings.server.rstrip("/"),
        "variant": chosen.name,
        "scope": dict(scope),
        "synced_at": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
        "salt": salt,
        "rules": list(synced.rules),
        "repository_rules": None,
        "reviewed": [],
    }
    release = {"blocking": synced.blocking_field, "review_rule_name": chosen.review_rule_name}
    if chosen.repository_rules:
        payload = fetcher.get_json(expand(chosen.repository_rules, scope), "")
        data["repository_rules"] = names = repository_rule_names(payload)
        known = builtin_names | {rule["name"] for rule in synced.rules}
        unknown = sorted(set(names) - known)
        if unknown:
            notices.append(
                f"note: the server also applies {', '.join(unknown)} to this repository "
                "(from its own configuration file?); define them in .spillguard.toml"
            )
    if chosen.reviewed_export:
        data["reviewed"], has_rule = fetcher.reviewed(expand(chosen.reviewed_export, scope), salt)
        if release["review_rule_name"] is None:
            release["review_rule_name"] = has_rule
    if chosen.rule_settings:
        settings_payload = fetcher.get_json(chosen.rule_settings, chosen.rules_permission)
        data["generic_password"], more = parse_password_settings(settings_payload)
        notices.extend(more)
    data["release_line"] = release
    _check_usable(data, builtin_names)
    return Fetched(data=data, notices=tuple(notices))


def _check_usable(data: dict[str, Any], builtin_names: frozenset[str]) -> None:
    """Load the result as scans will, so a cache they could not use is never written."""
    from spillguard.config import layer_from_table
    from spillguard.errors import ConfigError
    from spillguard.sync_cache import SERVER_SOURCE, server_layer_table

    try:
        layer_from_table(
            server_layer_table(data, builtin_names), source=SERVER_SOURCE, role="server"
        )
    except ConfigError as error:
        raise SyncError(f"the server's rules cannot be used: {error}") from None
