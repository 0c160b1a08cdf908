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

from spillguard.core.errors import SyncError
from spillguard.detection.fingerprint import reviewed_digest
from spillguard.sync.export import UnplacedExportError, reviewed_lines
from spillguard.sync.http import (
    Call,
    ClientSettings,
    Response,
    StatusError,
    encoding_of,
    request,
)
from spillguard.sync.limits import MAX_ITEMS, MAX_REVIEWED, LimitError, check_count, load_json
from spillguard.sync.messages import excerpt
from spillguard.sync.rules import (
    items_of,
    parse_password_settings,
    parse_rules,
    repository_rule_names,
    rule_name,
)
from spillguard.sync.variants import Variant, expand

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence

#: CSV or zip preferred; anything else is still read (the documents name no media type for
#: the reviewed exports, and a strict server answers 406 to an Accept it cannot meet).
EXPORT_ACCEPT = "text/csv, application/zip, application/octet-stream;q=0.5, */*;q=0.1"


#: A wider export answering one of these is left out: these credentials may not read it,
#: or the release line does not offer it.
CLIENT_ERRORS = range(400, 500)
#: Pages followed at most for one list: a server that never says "last page" fails the sync.
MAX_PAGES = 100


def next_page(payload: Any) -> dict[str, str] | None:
    """The query of the next page when a paged envelope says there is one.

    The documents show no envelope for the lists sync reads, but call the code-hosting
    lists "paged JSON" with start and limit (``values``, ``isLastPage``,
    ``nextPageStart``) and page the wiki with page and size (``content``, ``last``,
    ``number``). A list that arrives paged anyway is read to its last page.
    """
    if not isinstance(payload, dict):
        return None
    if payload.get("isLastPage") is False:
        start, size = payload.get("start"), payload.get("size")
        following = payload.get("nextPageStart")
        if not isinstance(following, int) and isinstance(start, int) and isinstance(size, int):
            following = start + size
        if isinstance(following, int):
            return {"start": str(following)}
    if payload.get("last") is False and isinstance(payload.get("number"), int):
        return {"page": str(payload["number"] + 1)}
    return None


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class Fetched:
    data: dict[str, Any]
    notices: tuple[str, ...]


def json_answer(response: Response, call: Call, secrets: Sequence[str] = ()) -> Any:
    """The answer's JSON; an answer that is not (a proxy's page) is an error showing its
    start, with ``secrets`` (the credentials sent) scrubbed from it."""
    try:
        return load_json(response.body, encoding_of(response.body, response.charset), call.where)
    except LimitError:
        raise
    except (UnicodeDecodeError, ValueError):
        raise SyncError(
            f"{call.where}: the answer is not JSON ({response.content_type}): "
            f"{excerpt(response.body, secrets)}"
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
        return json_answer(
            request(self.settings, call, sleep=self.sleep), call, self.settings.secrets
        )

    def get_list(self, path: str, permission: str, what: str) -> list[Any]:
        """Every item of a list answer, following a paged envelope to its last page."""
        from urllib.parse import urlencode

        payload = self.get_json(path, permission)
        found = list(items_of(payload, what))
        for _ in range(MAX_PAGES - 1):
            check_count(len(found), MAX_ITEMS, f"items in the {what} answer", f"GET {path}")
            query = next_page(payload)
            if query is None:
                return found
            payload = self.get_json(f"{path}?{urlencode(query)}", permission)
            found.extend(items_of(payload, what))
        check_count(len(found), MAX_ITEMS, f"items in the {what} answer", f"GET {path}")
        if next_page(payload) is None:
            return found
        raise SyncError(f"GET {path}: the {what} answer has more than {MAX_PAGES} pages")

    def reviewed(
        self, path: str, salt: str, by_id: Mapping[str, str], scope: Mapping[str, str] | None = None
    ) -> tuple[set[tuple[str, str | None]], bool | None]:
        """(digest, rule) of every reviewed line of an export, and its ruleName flag."""
        response = self.get(path, self.variant.reviewed_permission, EXPORT_ACCEPT)
        lines, has_rule = reviewed_lines(response.body, f"GET {path}", response.charset, scope)
        entries = {
            (reviewed_digest(text, salt), rule_name(by_id.get(rule, rule)) if rule else None)
            for text, rule in lines
        }
        return entries, has_rule

    def wider(
        self, what: str, path: str, salt: str, by_id: Mapping[str, str], scope: Mapping[str, str]
    ) -> set[tuple[str, str | None]] | None:
        """A wider export's lines reviewed in ``scope``; None (and a note) when it is not
        readable with these credentials or does not say where its lines were reviewed."""
        try:
            return self.reviewed(path, salt, by_id, scope)[0]
        except StatusError as error:
            if error.status not in CLIENT_ERRORS:
                raise
            self.notices.append(f"note: the {what} reviewed-line export was not read: {error}")
        except UnplacedExportError as error:
            self.notices.append(f"note: the {what} reviewed-line export: {error}")
        return None


def _read_reviewed(
    fetcher: _Fetcher, export: str, scope: Mapping[str, str], salt: str, by_id: dict[str, str]
) -> tuple[list[dict[str, Any]], bool | None, list[str]]:
    """The scope's reviewed lines (``export``), then those the wider exports hold for it."""
    chosen = fetcher.variant
    entries, has_rule = fetcher.reviewed(expand(export, scope), salt, by_id)
    narrowest = chosen.scope[-1]
    read = ["repository" if narrowest == "repo" else narrowest]
    for what, template in chosen.wider_reviewed:
        more = fetcher.wider(what, expand(template, scope), salt, by_id, scope)
        if more is not None:
            entries |= more
            read.append(what)
            check_count(len(entries), MAX_REVIEWED, "reviewed lines", f"the {what} export")
    found = [{"digest": digest, "rule": rule} for digest, rule in sorted(entries, key=str)]
    return found, has_rule, read


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
        fetcher.get_list(expand(chosen.rules, scope), chosen.rules_permission, "rule list"),
        builtin_names,
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
        "refused": list(synced.refused),
        "repository_rules": None,
        "reviewed": [],
    }
    release = {"blocking": synced.blocking_field, "review_rule_name": chosen.review_rule_name}
    if chosen.repository_rules:
        payload = fetcher.get_list(expand(chosen.repository_rules, scope), "", "rule_types")
        data["repository_rules"] = names = repository_rule_names(payload)
        known = builtin_names | {rule["name"] for rule in (*synced.rules, *synced.refused)}
        unknown = sorted(set(names) - known)
        if unknown:
            notices.append(
                f"note: the server also applies {', '.join(unknown)} to this repository "
                "(from its own configuration file?); define them in .spillguard.toml"
            )
    if chosen.reviewed_export:
        data["reviewed"], has_rule, data["reviewed_exports"] = _read_reviewed(
            fetcher, chosen.reviewed_export, scope, salt, synced.by_id
        )
        if release["review_rule_name"] is None:
            release["review_rule_name"] = has_rule
    if chosen.rule_settings:
        settings_payload = fetcher.get_json(chosen.rule_settings, chosen.rules_permission)
        data["generic_password"], more = parse_password_settings(settings_payload)
        notices.extend(more)
    data["release_line"] = release
    _check_usable(data, builtin_names)
    return Fetched(data=data, notices=(*notices, *fetcher.notices))


def _check_usable(data: dict[str, Any], builtin_names: frozenset[str]) -> None:
    """Load the result as scans will, so a cache they could not use is never written."""
    from spillguard.configuration.config import layer_from_table
    from spillguard.configuration.fidelity import server_table
    from spillguard.configuration.sync_cache import SERVER_SOURCE
    from spillguard.core.errors import ConfigError

    try:
        layer_from_table(server_table(data, builtin_names), source=SERVER_SOURCE, role="server")
    except ConfigError as error:
        raise SyncError(f"the server's rules cannot be used: {error}") from None
