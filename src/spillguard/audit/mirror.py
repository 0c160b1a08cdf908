"""A clone URL's bare mirror under the clone folder: made once, fetched before each audit.

spillguard fetches only into a mirror it made. The folder is derived from the whole URL
(``locations.mirror_folder``), and before every fetch the mirror's own config must say
that spillguard made it for this repository (``spillguard.mirrorOf``) and its
``remote.origin.url`` must name this repository. A mirror is cloned into a temporary
folder and renamed into place once complete, so a folder that is there is whole.

The origin is stored as shown (``https://****@host/...``): the fetch is given the URL as
written, so credentials are used and never written into the mirror.
"""

from __future__ import annotations

import contextlib
import shutil
import subprocess
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING

from spillguard.audit.locations import LocationError, inside, parse_clone_url, scrubbed
from spillguard.core import gitcommand
from spillguard.core.errors import GitTimeoutError, SpillguardError

if TYPE_CHECKING:
    from spillguard.audit.locations import CloneUrl

MARKER = "spillguard.mirrorOf"
#: What git prints after the reason of a failed fetch, whatever the reason.
_BOILERPLATE = (
    "could not read from remote repository",
    "please make sure you have the correct access rights",
    "and the repository exists",
)


class MirrorError(SpillguardError):
    """The URL could not be mirrored or fetched; the message says why, in one line."""


def _git(*args: str) -> subprocess.CompletedProcess[str]:
    # No hook, no URL that is a shell command, no prompt for a user name or password
    # (an audit runs unattended): gitcommand.fetch_command.
    done = gitcommand.run(gitcommand.fetch_command(*args), env=gitcommand.fetch_environment())
    told, said = (out.decode("utf-8", "replace") for out in (done.stdout, done.stderr))
    return subprocess.CompletedProcess(done.args, done.returncode, told, said)


def failure_reason(stderr: str) -> str:
    """Why git failed, in one line: its first message that is not the advice every
    failed fetch ends with ("...and the repository exists.")."""
    lines = [line.strip() for line in stderr.splitlines() if line.strip()]
    meaningful = [
        line
        for line in lines
        if not any(text in line.lower() for text in _BOILERPLATE)
        and not line.lower().startswith(("warning:", "hint:"))
    ]
    chosen = next((line for line in meaningful if line.startswith(("fatal:", "error:"))), None)
    chosen = chosen or (meaningful or lines or ["git failed without saying why"])[0]
    return chosen.removeprefix("fatal: ").removeprefix("error: ")


def _config(folder: Path, key: str) -> str | None:
    done = _git("config", "--file", str(folder / "config"), "--get", key)
    return done.stdout.strip() if done.returncode == 0 else None


def _check_mirror(url: CloneUrl, folder: Path, clone_dir: Path) -> None:
    """Raise unless ``folder`` is spillguard's mirror of ``url``."""
    if folder.is_symlink() or not inside(folder, clone_dir):
        raise MirrorError(f"{folder} leads out of the clone folder; not fetched")
    if _config(folder, MARKER) != url.identity:
        raise MirrorError(
            f"{folder} is not a mirror spillguard made for this repository; not fetched "
            "(move it away to mirror the URL anew)"
        )
    origin = _config(folder, "remote.origin.url") or ""
    try:
        mirrored = parse_clone_url(origin).identity
    except LocationError:
        mirrored = None
    if mirrored != url.identity:
        raise MirrorError(f"{folder} mirrors {origin or 'nothing'}, not this URL; not fetched")


def _failed(url: CloneUrl, done: subprocess.CompletedProcess[str]) -> MirrorError:
    return MirrorError(f"cannot fetch {url.shown}: {scrubbed(failure_reason(done.stderr), url)}")


def _fetch(url: CloneUrl, folder: Path) -> None:
    """Every branch of ``url`` into ``folder``, and its ``HEAD`` as the remote's default
    branch is now (a remote that renamed its default branch would otherwise leave the
    mirror's pointing at a branch --prune removed: an empty repository, judged clean)."""
    done = _git("--git-dir", str(folder), "fetch", "--quiet", "--prune",
                "--no-write-fetch-head", "--", url.given, "+refs/heads/*:refs/heads/*")  # fmt: skip
    if done.returncode != 0:
        raise _failed(url, done)
    listed = _git("ls-remote", "--symref", "--", url.given, "HEAD")
    if listed.returncode != 0:
        raise _failed(url, listed)
    for line in listed.stdout.splitlines():
        target, _, name = line.removeprefix("ref: ").partition("\t")
        if line.startswith("ref: ") and name == "HEAD" and target.startswith("refs/heads/"):
            _git("--git-dir", str(folder), "symbolic-ref", "HEAD", target)


def _clone(url: CloneUrl, folder: Path) -> None:
    """A new mirror, made in a temporary folder and renamed into place once whole. Made
    by ``init`` and ``fetch``, not ``clone``, so the credentials are never written into
    its config, not even for a moment a killed audit would leave behind."""
    folder.parent.mkdir(parents=True, exist_ok=True)
    temporary = Path(tempfile.mkdtemp(prefix=f".{folder.name}.", dir=folder.parent))
    try:
        made = _git("init", "--quiet", "--bare", str(temporary))
        if made.returncode != 0:
            raise _failed(url, made)
        for key, value in (("remote.origin.url", url.shown), (MARKER, url.identity)):
            _git("config", "--file", str(temporary / "config"), key, value)
        _fetch(url, temporary)
        temporary.rename(folder)  # an existing folder (a race) makes this fail
    finally:
        shutil.rmtree(temporary, ignore_errors=True)


def mirror(url: CloneUrl, folder: Path, clone_dir: Path, budget: float | None = None) -> None:
    """Make or bring up to date the mirror of ``url`` at ``folder``, within ``budget``
    seconds (the repository's: a server that answers slowly, or never, holds no audit
    for longer); MirrorError if not."""
    if not inside(folder.parent, clone_dir):
        raise MirrorError(f"{folder.parent} leads out of the clone folder; not fetched")
    bounded = (
        contextlib.nullcontext()
        if budget is None
        else gitcommand.deadline(time.monotonic() + budget)
    )
    try:
        with bounded:
            if folder.is_symlink() or folder.exists():
                _check_mirror(url, folder, clone_dir)
                _fetch(url, folder)
            else:
                _clone(url, folder)
    except GitTimeoutError:
        raise MirrorError(
            f"cannot fetch {url.shown}: not done within its time budget of {budget:g} s "
            "(--repository-budget)"
        ) from None
    except OSError as error:
        raise MirrorError(f"cannot mirror {url.shown}: {error.strerror}") from None
