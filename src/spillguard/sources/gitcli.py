"""git's command line as every reader of ``sources`` runs it: the lowest module here.

Each reader (history, pushes, staged changes, tags) runs git through these few
helpers, and the selection of commits is turned into ``git rev-list`` arguments
here once, so no reader imports another for them. It imports neither libgit2 nor
the rules (a commit hook and the early listing of a history scan import it).
"""

from __future__ import annotations

import os
import subprocess
import weakref

from spillguard.core import gitcommand
from spillguard.core.errors import GitError

TYPE_CHECKING = False  # typing's, without importing typing (a hook's start-up); mypy reads it alike
if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from typing import IO

    from spillguard.core.models import Selection

#: How history scans list commits: no parent before its children, otherwise newest
#: first (the order of libgit2's topological, time-sorted walk), with commit times.
HISTORY_LISTING = ("rev-list", "--date-order", "--format=%ct")
#: git maps as much of a pack as it reads (1 GiB windows), and its memory grew with the
#: repository: listing 40,000 commits took 199 MB, with these 48 MB, in the same time.
BOUNDED_PACK_MAPS = ("-c", "core.packedGitWindowSize=8m", "-c", "core.packedGitLimit=32m")
#: The memory of the gits beside a chunk's ``git diff-tree`` that read blobs (merges'
#: diffs, blobs read whole) and of those that read a commit on its own, over
#: ``diffparse.git_command``'s bounds (the later -c wins): on git/git's newest 4,000
#: commits, the merges' git took 64 MB with the commits' settings and 37 MB with these,
#: for 8 % more of its time. A commit read on its own reads few objects.
SIDE_GIT_MEMORY = ("-c", "core.deltaBaseCacheLimit=8m", "-c", "core.packedGitLimit=16m")
#: A git that reads objects it seldom reads twice (blob sizes, a commit's blobs read on
#: their own, rename questions): one pack window, and few delta bases kept (git keeps
#: 96 MiB). A history scan of git/git: its blob sizes and rename questions took 0.3
#: CPU-s either way, the rename gits 16 MB with 8 MiB of bases and 9 MB with these; a
#: commit of 919 renamed files, read on its own, took 67 MB of git where unbounded.
LOOKUP_GIT_MEMORY = (
    *BOUNDED_PACK_MAPS,
    "-c",
    "core.packedGitLimit=8m",
    "-c",
    "core.deltaBaseCacheLimit=1m",
)


def run_git(*args: str, stdin: bytes = b"", also: Mapping[str, str] | None = None) -> bytes | None:
    """git's output, or None when it fails or is not installed (the caller decides
    what that means: a revision is unknown, a HEAD unborn); ``also``: variables to
    set in its environment."""
    environ = None if also is None else {**os.environ, **also}
    try:
        completed = gitcommand.run(
            gitcommand.command(*args), stdin=stdin, env=gitcommand.environment(environ)
        )
    except FileNotFoundError:
        return None
    return completed.stdout if completed.returncode == 0 else None


class Started:
    """A git started now whose exit code is read later: its time passes beside the
    caller's work (a hook's question it may not need the answer to)."""

    def __init__(self, *args: str) -> None:
        try:
            self._process: subprocess.Popen[bytes] | None = gitcommand.start(
                gitcommand.command(*args),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                env=gitcommand.environment(),
            )
        except FileNotFoundError:
            self._process = None
        else:
            # an answer nobody asked for is still waited for: no zombie is left
            weakref.finalize(self, self._process.wait)

    def code(self) -> int | None:
        """git's exit code; None where git is not installed."""
        return None if self._process is None else self._process.wait()


def git_output(
    git_dir: str, *args: str, stdin: bytes = b"", env: Mapping[str, str] | None = None
) -> bytes:
    """git's output in ``git_dir`` (in ``env``, by default this process's environment);
    a failure is a GitError with git's own last word."""
    try:
        completed = gitcommand.run(
            gitcommand.command(f"--git-dir={git_dir}", *args),
            stdin=stdin,
            env=gitcommand.environment(env),
        )
    except FileNotFoundError:
        raise GitError("git is not installed (spillguard reads repositories with it)") from None
    if completed.returncode != 0:
        told = completed.stderr.decode(errors="replace").strip().splitlines()
        command = next(arg for arg in args if not arg.startswith("-"))  # after git's options
        raise GitError(f"git {command} failed: {told[-1] if told else completed.returncode}")
    return completed.stdout


#: An object ``cat_objects`` found: its id, type and content.
Found = tuple[str, str, bytes]


def cat_objects(output: bytes, names: Sequence[str]) -> dict[str, Found]:
    """``git cat-file --batch`` output for ``names``, by name (a missing one left out,
    and those after it when git stopped early)."""
    found = {}
    position = 0
    for name in names:
        end = output.find(b"\n", position)
        if end < 0:
            break
        header = output[position:end].split(b" ")
        if len(header) != len(("id", "type", "size")):  # "<name> missing"
            position = end + 1
            continue
        size = int(header[2])
        found[name] = (header[0].decode(), header[1].decode(), output[end + 1 : end + 1 + size])
        position = end + 1 + size + 1
    return found


def remote_tips(git_dir: str, url: str) -> list[str]:
    """The object id of every ref the repository at ``url`` has now, as it tells them
    (``git ls-remote``: one connection, made as ``git push`` makes it; no hook, no
    prompt for a password)."""
    command = gitcommand.fetch_command(f"--git-dir={git_dir}", "ls-remote", "--", url)
    completed = gitcommand.run(command, env=gitcommand.fetch_environment())
    if completed.returncode != 0:
        told = completed.stderr.decode(errors="replace").strip().splitlines()
        raise GitError(f"git ls-remote failed: {told[-1] if told else completed.returncode}")
    return [line.split("\t", 1)[0] for line in completed.stdout.decode().splitlines() if line]


def git_dir_of(path: str) -> str:
    found = run_git("-C", path, "rev-parse", "--absolute-git-dir")
    if found is None:
        import shutil  # here: its imports (bz2, lzma...) cost a commit hook ~1 ms

        if shutil.which("git") is None:  # say what is missing: the repository may be fine
            raise GitError("git is not installed (spillguard reads repositories with it)")
        raise GitError(f"{path}: not a git repository")
    return found.decode().strip()


def listed_ids(listed: bytes, *, since: float | None, until: float | None) -> list[str]:
    """The ids ``HISTORY_LISTING`` printed, of commits made in ``[since, until)``.

    git prints ``commit <id>`` and the commit time on the next line: three words a
    commit, split at once rather than line by line (20,000 commits: 2 ms, not 7).
    """
    words = listed.decode().split()
    ids = words[1::3]
    if since is None and until is None:
        return ids
    times = map(int, words[2::3])
    return [
        commit
        for commit, when in zip(ids, times, strict=True)
        if (since is None or when >= since) and (until is None or when < until)
    ]


def revision_arguments(selection: Selection) -> list[str]:
    """The selection as ``git rev-list`` arguments (a revision like an option is the
    caller's to keep from git)."""
    revisions = [f"refs/heads/{name}" for name in selection.branches]
    revisions += ["--all"] if selection.all_refs else []
    revisions += selection.revs
    return revisions or ["HEAD"]


def selected_ids(path: str, selection: Selection) -> list[str]:
    """The selected commits' ids, children first (revisions are checked at the call)."""
    git_dir = git_dir_of(path)
    revisions = checked_revisions(git_dir, selection)
    return history_ids(git_dir, revisions, since=selection.since, until=selection.until)


def history_ids(
    git_dir: str, revisions: Sequence[str], *, since: float | None, until: float | None
) -> list[str]:
    """``git rev-list --date-order REVISIONS`` (no parent before its children, otherwise
    newest commit first: the order of libgit2's topological and time-sorted walk),
    committed in ``[since, until)``."""
    listed = git_output(git_dir, *HISTORY_LISTING, *revisions, "--")
    return listed_ids(listed, since=since, until=until)


def checked_revisions(git_dir: str, selection: Selection) -> list[str]:
    """The selection's ``git rev-list`` arguments, each revision checked first, so a bad
    one fails with a message that names it."""
    for name in selection.branches:
        if (
            run_git(f"--git-dir={git_dir}", "rev-parse", "--verify", "-q", f"refs/heads/{name}")
            is None
        ):
            raise GitError(f"no branch named {name!r}")
    for rev in selection.revs:
        bare = rev.removeprefix("^")
        for side in bare.split("...", 1) if "..." in bare else bare.split("..", 1):
            resolve(git_dir, side or "HEAD", "commit")
    if not (selection.revs or selection.branches or selection.all_refs):
        resolve(git_dir, "HEAD", "commit")
    return revision_arguments(selection)


def resolve(git_dir: str, rev: str, kind: str) -> str:
    """The id of the ``kind`` (commit, tree) ``rev`` names; a GitError that names it."""
    found = None
    if not rev.startswith("-"):  # never an option to git
        found = run_git(f"--git-dir={git_dir}", "rev-parse", "--verify", "-q", f"{rev}^{{{kind}}}")
    if found is not None:
        return found.decode().strip()
    if (
        rev in {"HEAD", "@"}
        and run_git(f"--git-dir={git_dir}", "rev-parse", "-q", "--verify", "HEAD") is None
    ):
        raise GitError("the repository has no commits yet (HEAD is unborn)")
    raise GitError(f"unknown revision {rev!r}")


class Conversation:
    """A git that answers questions on its input as they come (``cat-file --batch``,
    ``diff-tree --stdin``), started on the first question: a chunk of a history
    asks many, and a git started for each costs milliseconds."""

    def __init__(self, command: Sequence[str], env: dict[str, str]) -> None:
        self._command = command
        self._env = env
        self._git: subprocess.Popen[bytes] | None = None

    def ask(self, question: bytes) -> IO[bytes] | None:
        """Send ``question``; git's output, to read its answer from, or None if git
        stopped."""
        if self._git is None:
            self._git = gitcommand.start(
                self._command,
                env=self._env,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
            )
        given, told = self._git.stdin, self._git.stdout
        assert given is not None  # noqa: S101 - Popen's promise for stdin=PIPE
        assert told is not None  # noqa: S101 - and for stdout=PIPE
        try:
            given.write(question)
            given.flush()
        except BrokenPipeError:
            return None
        return told

    @property
    def output(self) -> IO[bytes] | None:
        """git's output, once a question was asked."""
        return None if self._git is None else self._git.stdout

    def close(self) -> None:
        """Close both pipes (git ends at the end of its input), then reap git."""
        if self._git is not None:
            for stream in (self._git.stdin, self._git.stdout):
                if stream is not None:
                    stream.close()
            self._git.wait()
