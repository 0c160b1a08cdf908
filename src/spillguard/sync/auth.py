"""Credentials for the REST API: environment, ``~/.netrc``, or the system keyring.

Never from a configuration file or anything in the repository. The values are kept
out of every repr and message; only where they came from is ever shown.
"""

from __future__ import annotations

import base64
import dataclasses
from pathlib import Path
from typing import TYPE_CHECKING

from spillguard.core.errors import UsageError

if TYPE_CHECKING:
    from collections.abc import Mapping

USERNAME_VAR = "SPILLGUARD_USERNAME"
PASSWORD_VAR = "SPILLGUARD_PASSWORD"  # noqa: S105 - the variable's name
API_KEY_VAR = "SPILLGUARD_API_KEY"
#: The keyring service is ``spillguard:HOST``; the API key's user name is this.
KEYRING_API_KEY_USER = "api-key"


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class Credentials:
    authorization: str = dataclasses.field(repr=False)
    secrets: tuple[str, ...] = dataclasses.field(repr=False)
    #: Where they came from, e.g. "SPILLGUARD_USERNAME/SPILLGUARD_PASSWORD (user ada)".
    origin: str


def _check_printable(origin: str, *values: str) -> None:
    """A control character would break the header (and land in an error message)."""
    if any(not value.isprintable() for value in values):
        raise UsageError(f"the credentials from {origin} contain a control character")


def _basic(user: str, password: str, origin: str) -> Credentials:
    _check_printable(origin, user, password)
    token = base64.b64encode(f"{user}:{password}".encode()).decode("ascii")
    return Credentials(
        authorization=f"Basic {token}",
        secrets=(password, token),
        origin=f"{origin} (user {user})",
    )


def _bearer(key: str, origin: str) -> Credentials:
    _check_printable(origin, key)
    return Credentials(authorization=f"Bearer {key}", secrets=(key,), origin=f"{origin} (API key)")


def _netrc(host: str, environ: Mapping[str, str]) -> tuple[str, str] | None:
    import netrc

    path = Path(environ.get("NETRC") or Path(environ.get("HOME", "~"), ".netrc")).expanduser()
    if not path.is_file():
        return None
    try:
        entry = netrc.netrc(str(path)).authenticators(host)
    except netrc.NetrcParseError as error:
        # The parser's message can quote a token from the file: show the line only.
        raise UsageError(f"{path}: cannot parse line {error.lineno}") from None
    except OSError as error:
        raise UsageError(f"{path}: cannot read: {error.strerror}") from None
    if entry is None or not entry[2]:
        return None
    return entry[0] or "", entry[2]


def _keyring(host: str, user: str | None) -> tuple[str, str] | None:
    try:
        import keyring  # type: ignore[import-not-found,unused-ignore]
        from keyring.errors import KeyringError  # type: ignore[import-not-found,unused-ignore]
    except ImportError:
        return None
    try:
        found = keyring.get_credential(f"spillguard:{host}", user)
    except KeyringError:
        return None
    if found is None or not found.password:
        return None
    return str(found.username or user or ""), str(found.password)


def find_credentials(host: str, *, bearer: bool, environ: Mapping[str, str]) -> Credentials:
    """The first credentials found for ``host``: environment, then netrc, then keyring."""
    if bearer:
        return _find_api_key(host, environ)
    user, password = environ.get(USERNAME_VAR), environ.get(PASSWORD_VAR)
    if user and password:
        return _basic(user, password, f"{USERNAME_VAR}/{PASSWORD_VAR}")
    if bool(user) != bool(password):
        missing = PASSWORD_VAR if user else USERNAME_VAR
        raise UsageError(f"{missing} is not set (both {USERNAME_VAR} and {PASSWORD_VAR} are)")
    found = _netrc(host, environ)
    if found is not None and found[0]:
        return _basic(found[0], found[1], "~/.netrc")
    found = _keyring(host, None)
    if found is not None and found[0]:
        return _basic(found[0], found[1], f"the system keyring (service spillguard:{host})")
    raise UsageError(
        f"no credentials for {host}: set {USERNAME_VAR} and {PASSWORD_VAR}, add a machine "
        f"{host} entry to ~/.netrc, or store them in the keyring as service spillguard:{host}"
    )


def _find_api_key(host: str, environ: Mapping[str, str]) -> Credentials:
    if environ.get(API_KEY_VAR):
        return _bearer(environ[API_KEY_VAR], API_KEY_VAR)
    found = _netrc(host, environ)
    if found is not None:
        return _bearer(found[1], "~/.netrc password")
    found = _keyring(host, KEYRING_API_KEY_USER)
    if found is not None:
        return _bearer(found[1], f"the system keyring (spillguard:{host}, {KEYRING_API_KEY_USER})")
    raise UsageError(
        f"no API key for {host}: set {API_KEY_VAR}, add a machine {host} entry with the key "
        f"as its password to ~/.netrc, or store it in the keyring as service spillguard:{host}, "
        f"user {KEYRING_API_KEY_USER}"
    )
