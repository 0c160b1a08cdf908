"""Where a client reads the repository's configuration files: as the server does, or locally.

The server judges a push by ``.spillguard.toml`` (or ``soteri-security.yml``) and
``.spillguard-reviewed.toml`` as they are at the tip of its default branch, so a
commit cannot loosen the rules that judge it. A client does the same (``config_from
= "default-branch"``) from the default branch as the remote has it:
``refs/remotes/REMOTE/HEAD``, else ``REMOTE/main`` or ``REMOTE/master``, with a note;
when the remote's default branch is not known at all it reads the local files, and
says so. ``"work-tree"`` reads the local files (the staged ones in pre-commit): the
way to try an edit of the files themselves. ``"auto"``, the default, is the
server's way for pre-push, and for every command once the repository is synced.
"""

from __future__ import annotations

from spillguard.configuration.config import REPOSITORY_FILE, SERVER_REPOSITORY_FILE
from spillguard.configuration.files import (
    MAX_REPOSITORY_FILE,
    FileReader,
    RepositoryText,
    decoded,
)
from spillguard.configuration.reviewed import REVIEWED_FILE
from spillguard.core import gitcommand
from spillguard.core.values import Frozen, fill

TYPE_CHECKING = False  # typing's, without importing typing (a hook's start-up); mypy reads it alike
if TYPE_CHECKING:
    from collections.abc import Sequence

#: The environment variable that sets ``config_from`` for one run, where no option
#: reaches spillguard (``git push`` runs the pre-push hook with git's arguments only).
CONFIG_FROM_VARIABLE = "SPILLGUARD_CONFIG_FROM"
#: The files read from the default branch, all at once.
FILES = (REPOSITORY_FILE, SERVER_REPOSITORY_FILE, REVIEWED_FILE)
_REGULAR = (b"100644", b"100755")


class Choice(Frozen):
    """The reader to use, and the notes that explain it to the user."""

    __slots__ = ("notices", "read")

    read: FileReader
    notices: tuple[str, ...]

    def __init__(self, read: FileReader, notices: tuple[str, ...] = ()) -> None:
        fill(self, locals())


def choose(local: FileReader, *, repo_dir: str, remote: str | None = None) -> Choice:
    """The files on the default branch of ``remote`` (default: origin, or the only
    remote); ``local`` with a note when that branch is not known."""
    found = _default_branch(repo_dir, remote)
    if isinstance(found, str):
        return Choice(local, (found,) if found else ())
    ref, shown, note = found
    files = _files_at(repo_dir, ref, shown)
    return Choice(files.get, (*note, *_edited(local, files, shown, pushing=remote is not None)))


def _edited(
    local: FileReader, files: dict[str, RepositoryText], shown: str, *, pushing: bool
) -> tuple[str, ...]:
    """A note when the local copy differs: an edit applies once it is on the default
    branch. A pre-push hook takes no option through ``git push``: the environment
    variable is the way to push with the local copy now."""
    changed = [name for name in FILES if _text(local(name)) != _text(files.get(name))]
    if not changed:
        return ()
    now = (
        f"to push with your copy now: {CONFIG_FROM_VARIABLE}=work-tree git push"
        if pushing
        else "--config-from work-tree to try it now"
    )
    note = (
        f"note: judged by the configuration on {shown}; your edited {', '.join(changed)} "
        f"applies once it is merged there ({now})"
    )
    return (note,)


def _text(found: RepositoryText) -> str | None:
    return None if found is None else found[0]


def _git(repo_dir: str, *args: str, stdin: bytes | None = None) -> bytes | None:
    """git's output, or None when the command fails (no such ref, not a repository)."""
    try:
        done = gitcommand.run(gitcommand.command("-C", repo_dir, *args), stdin=stdin or b"")
    except OSError:
        return None
    return done.stdout if done.returncode == 0 else None


def _default_branch(repo_dir: str, remote: str | None) -> tuple[str, str, tuple[str, ...]] | str:
    """(ref, its short name, notes) of the remote's default branch, or a note saying why
    there is none and that the local files are read instead ("" for a push to a remote
    nothing was ever fetched from: there is nothing the note could help with)."""
    name = _remote_name(repo_dir, remote) if remote else _default_remote(repo_dir)
    if name is None:
        return "note: no remote whose default branch has the configuration: local files are read"
    prefix = f"refs/remotes/{name}/"
    head = _git(repo_dir, "symbolic-ref", "-q", prefix + "HEAD")
    if head is not None:
        ref = head.decode().strip()
        return ref, ref.removeprefix("refs/remotes/"), ()
    for branch in ("main", "master"):
        if _git(repo_dir, "rev-parse", "--verify", "-q", prefix + branch) is not None:
            note = (
                f"note: {name}/HEAD is not set; the configuration is read from {name}/{branch} "
                f"(git remote set-head {name} --auto sets it)"
            )
            return prefix + branch, f"{name}/{branch}", (note,)
    if remote and not _git(repo_dir, "for-each-ref", "--count=1", prefix):
        # A push to a remote nothing was ever fetched from: the first push to a new
        # remote, whose default branch holds no configuration yet. Nothing to say.
        return ""
    return (
        f"note: the default branch of {name} is not known (git fetch {name}, then git remote "
        f"set-head {name} --auto): the configuration is read from the local files"
    )


def _remote_name(repo_dir: str, remote: str) -> str:
    """The remote's name: git gives a pre-push hook the URL when a push names no remote,
    and the remote configured with that URL has the remote-tracking branches."""
    listed = _git(repo_dir, "config", "--get-regexp", r"^remote\..*\.url$") or b""
    for line in listed.decode(errors="replace").splitlines():
        key, _, url = line.partition(" ")
        if url == remote:
            return key.removeprefix("remote.").removesuffix(".url")
    return remote


def _default_remote(repo_dir: str) -> str | None:
    listed = _git(repo_dir, "remote")
    names = (listed or b"").decode().split()
    if "origin" in names:
        return "origin"
    return names[0] if names else None


def _files_at(repo_dir: str, ref: str, shown: str) -> dict[str, RepositoryText]:
    """The configuration files in ``ref``'s tree, read by one ls-tree and one cat-file."""
    listed = _git(repo_dir, "ls-tree", "-z", "--long", ref, "--", *FILES) or b""
    wanted: list[tuple[str, str]] = []
    for entry in listed.split(b"\0"):
        meta, _, path = entry.partition(b"\t")
        fields = meta.split()
        regular = len(fields) == 4 and fields[0] in _REGULAR and fields[3].isdigit()
        if regular and int(fields[3]) <= MAX_REPOSITORY_FILE:
            wanted.append((path.decode(), fields[2].decode()))
    if not wanted:
        return {}
    blobs = _cat(repo_dir, [oid for _, oid in wanted])
    return {
        path: decoded(data, f"{path} on {shown}")
        for (path, _), data in zip(wanted, blobs, strict=True)
    }


def _cat(repo_dir: str, oids: Sequence[str]) -> list[bytes]:
    out = _git(repo_dir, "cat-file", "--batch", stdin="".join(f"{o}\n" for o in oids).encode())
    data = out or b""
    blobs: list[bytes] = []
    position = 0
    for _ in oids:
        header_end = data.index(b"\n", position)
        size = int(data[position:header_end].split()[2])
        blobs.append(data[header_end + 1 : header_end + 1 + size])
        position = header_end + 1 + size + 1
    return blobs
