"""Where a repository of the estate lives: its identity, its name, and its mirror's folder.

A repository is its full location, never its name: a clone URL is its host (and port)
and its path, so ``https://h/team/app`` and ``git@h:team/app`` are one repository and
``team/app`` on two hosts, or ``team/app`` beside ``team/app.git``, are two; a folder is
its resolved path. The state remembers a repository by that identity, and a URL's mirror
folder is derived from all of it (a digest beside a readable name), so two repositories
never share one. The name (``PROJECT/NAME``, as a server shows it) is only for reading.

A URL's credentials (``https://user:token@host/...``) are for the fetch alone: it is
shown and stored as ``https://****@host/...``.
"""

from __future__ import annotations

import dataclasses
import hashlib
import os
import re
from pathlib import Path
from urllib.parse import unquote, urlsplit

#: The transports an audit fetches with; git's others (ext::, fd::) run programs.
SCHEMES = frozenset({"https", "http", "ssh", "git", "file", "git+ssh", "ssh+git"})
HIDDEN = "****"
#: ``user@host:path``, git's scp-like syntax (no slash before the colon).
_SCP = re.compile(r"(?P<user>[^@/:\s]+)@(?P<host>[^/:\s]+):(?P<path>.*)", re.DOTALL)
#: Characters kept in a folder or file name made from a URL; any other becomes ``_``.
_UNSAFE_IN_NAME = re.compile(r"[^A-Za-z0-9._+-]")
_MAX_NAME = 80
#: Credentials shorter than this are not scrubbed from git's messages on their own
#: (a user name ``git`` is in every line); they are still never shown in the URL.
_SCRUBBED_LENGTH = 4


class LocationError(ValueError):
    """A line of the URL file that names no repository an audit can fetch."""


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class CloneUrl:
    """A clone URL of the URL file, read."""

    #: As written, credentials included: only the fetch sees it.
    given: str = dataclasses.field(repr=False)
    #: As shown and stored: credentials (and a query) replaced by ``****``.
    shown: str
    identity: str
    project: str
    name: str
    #: The credentials as git may print them (raw and decoded), to scrub its messages.
    credentials: tuple[str, ...] = dataclasses.field(repr=False, default=())


def is_url(line: str) -> bool:
    return "://" in line or _SCP.fullmatch(line) is not None


def _normalized(path: str) -> str:
    """``path`` with dot segments removed (RFC 3986), empty segments and a trailing
    slash dropped: ``/grp/../r2.git`` is ``/r2.git``."""
    kept: list[str] = []
    for segment in path.split("/"):
        if segment in ("", "."):
            continue
        if segment == "..":
            if kept:
                kept.pop()
            continue
        kept.append(segment)
    return "/" + "/".join(kept)


def _named(path: str, host: str) -> tuple[str, str]:
    segments = path.strip("/").split("/")
    if not segments[-1]:
        raise LocationError("the URL names no repository (its path is empty)")
    name = segments[-1].removesuffix(".git") or segments[-1]
    return (segments[-2] if len(segments) > 1 else host or "clones"), name


def _credentials(userinfo: str) -> tuple[str, ...]:
    user, _, password = userinfo.partition(":")
    forms = {userinfo, unquote(userinfo), password, unquote(password), user, unquote(user)}
    return tuple(sorted((f for f in forms if len(f) >= _SCRUBBED_LENGTH), key=len, reverse=True))


def parse_clone_url(text: str) -> CloneUrl:
    """The clone URL ``text`` read; a LocationError says why it cannot be audited."""
    scp = _SCP.fullmatch(text) if "://" not in text else None
    if scp is not None:
        host, path = scp["host"].lower(), _normalized(scp["path"])
        project, name = _named(path, host)
        return CloneUrl(given=text, shown=text, identity=f"{host}{path}", project=project,
                        name=name)  # fmt: skip
    try:
        parts = urlsplit(text)
        port = parts.port
    except ValueError as error:
        raise LocationError(f"not a clone URL ({error})") from None
    scheme = parts.scheme.lower()
    if scheme not in SCHEMES:
        raise LocationError(
            f"the {scheme or 'missing'} transport is not audited (https, ssh, git or file)"
        )
    userinfo, _, hostport = parts.netloc.rpartition("@")
    host = (parts.hostname or "").lower()
    # Any user of http(s) may be a token (https://TOKEN@host/); a password anywhere.
    hidden = bool(userinfo) and (scheme.startswith("http") or ":" in userinfo)
    shown_user = f"{HIDDEN}@" if hidden else (f"{userinfo}@" if userinfo else "")
    shown = f"{parts.scheme}://{shown_user}{hostport}{parts.path}"
    if parts.query:
        shown += f"?{HIDDEN}"  # a query can carry an access token too
    path = _normalized(parts.path)
    where = host + (f":{port}" if port is not None else "")
    identity = f"file://{path}" if scheme == "file" else f"{where}{path}"
    project, name = _named(path, host)
    secrets = [*_credentials(userinfo)] if hidden else []
    if parts.query:
        secrets.append(parts.query)
    return CloneUrl(given=text, shown=shown, identity=identity, project=project, name=name,
                    credentials=tuple(secrets))  # fmt: skip


def _safe(text: str) -> str:
    """``text`` as one file name: no separator, never ``.`` or ``..`` nor hidden."""
    return (_UNSAFE_IN_NAME.sub("_", text).lstrip(".") or "_")[:_MAX_NAME]


def mirror_folder(url: CloneUrl, clone_dir: Path) -> Path:
    """The mirror's folder, inside ``clone_dir`` whatever the URL says:
    ``HOST/PROJECT/NAME-DIGEST.git``, the digest of the whole identity."""
    digest = hashlib.sha256(url.identity.encode("utf-8", "surrogateescape")).hexdigest()[:16]
    host = url.identity.split("/", 1)[0] if not url.identity.startswith("file:") else "file"
    return clone_dir / _safe(host) / _safe(url.project) / f"{_safe(url.name)}-{digest}.git"


def inside(path: Path, folder: Path) -> bool:
    """Whether ``path`` (resolved, links followed) lies in ``folder`` (resolved)."""
    resolved, within = Path(os.path.realpath(path)), Path(os.path.realpath(folder))
    return resolved == within or within in resolved.parents


def folder_identity(path: Path) -> str:
    """A folder's identity: its resolved path."""
    return os.path.realpath(path)


def folder_name(path: Path) -> tuple[str, str]:
    """(project, name) of a repository folder, from where it was found (a link's own
    place, not its target's): the folder it lies in, and its name without ``.git``."""
    absolute = Path(os.path.normpath(path.absolute()))
    return absolute.parent.name, absolute.name.removesuffix(".git") or absolute.name


def scrubbed(text: str, url: CloneUrl) -> str:
    """git's message with the URL shown as ``shown`` and its credentials replaced."""
    text = text.replace(url.given, url.shown)
    for secret in url.credentials:
        text = text.replace(secret, HIDDEN)
    return text
