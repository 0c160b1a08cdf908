"""From ``[sync]`` settings, flags and credentials to a ready client for one variant."""

from __future__ import annotations

import dataclasses
import re
from typing import TYPE_CHECKING, Any

from spillguard.configuration.schema import SYNC
from spillguard.core.errors import UsageError
from spillguard.sync.auth import find_credentials
from spillguard.sync.http import ClientSettings, check_server_url
from spillguard.sync.variants import Variant, scope_values, variant

if TYPE_CHECKING:
    from collections.abc import Mapping

#: Seconds one request may take at most: a sync stays bounded even when misconfigured.
MAX_TIMEOUT = 300
_HEADER_NAME = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")
#: Headers the client sets itself; the XSRF header (a repository may name it) never replaces one.
_RESERVED = frozenset(
    {"authorization", "proxy-authorization", "host", "cookie", "accept", "user-agent"}
    | {"content-type", "content-length", "transfer-encoding", "connection"}
)
_API_KEY_HINT = (
    "an API key stops working when it expires, is revoked, its issuer is no longer an app "
    "administrator, or the site leaves the advanced licence tier"
)


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class Target:
    """The server, variant and scope to talk to, and how."""

    client: ClientSettings
    variant: Variant
    scope: dict[str, str]
    #: Where the credentials came from (never the credentials).
    credentials_origin: str


def merged_settings(
    configured: Mapping[str, Any], overrides: Mapping[str, Any | None]
) -> dict[str, Any]:
    """``[sync]`` from the configuration files, then the command-line flags over it."""
    merged = {name: key.default for name, key in SYNC.items() if key.default is not None}
    merged.update(configured)
    merged.update({name: value for name, value in overrides.items() if value is not None})
    return merged


def target(settings: Mapping[str, Any], environ: Mapping[str, str]) -> Target:
    """Validate the settings and find credentials; nothing is sent yet."""
    from urllib.parse import urlsplit

    server = settings.get("server")
    if not server:
        raise UsageError("no server to sync from: give --server URL or set [sync] server")
    check_server_url(str(server))
    chosen = variant(str(settings.get("variant") or "code-hosting"))
    scope = scope_values(chosen, settings)
    header = str(settings.get("xsrf_header") or "")
    if header and (not _HEADER_NAME.fullmatch(header) or header.lower() in _RESERVED):
        raise UsageError(f"[sync] xsrf_header {header!r} is not a usable HTTP header name")
    timeout = float(settings.get("timeout", 10))
    if not 0 < timeout <= MAX_TIMEOUT:
        raise UsageError(f"[sync] timeout must be more than 0 and at most {MAX_TIMEOUT} seconds")
    host = urlsplit(str(server)).hostname or ""
    credentials = find_credentials(host, bearer=chosen.bearer, environ=environ)
    hint = f"they came from {credentials.origin}"
    client = ClientSettings(
        server=str(server),
        authorization=credentials.authorization,
        secrets=credentials.secrets,
        auth_hint=f"{hint}; {_API_KEY_HINT}" if chosen.bearer else hint,
        xsrf_header=(header or None) if chosen.xsrf else None,
        ca_bundle=settings.get("ca_bundle"),
        timeout=timeout,
    )
    return Target(client=client, variant=chosen, scope=scope, credentials_origin=credentials.origin)
