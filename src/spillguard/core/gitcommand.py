"""How every git spillguard starts is run, so that a repository's own configuration
never makes it run a program.

git runs programs its configuration names, and a repository's configuration
(``.git/config``, a bare repository's ``config``, and every file they include) is
written by whoever handed over the repository, or by a server's tenant. Every git
spillguard starts is started here (``run``, ``start``, ``answer``), with its arguments from
``command`` (or ``fetch_command``) and its environment from ``environment``;
``tests/test_git_config_programs.py`` keeps every process started in ``src/`` to this
module. Options given with ``-c`` outrank every configuration file, included ones
too (``include.path``, ``includeIf``).

Pinned for every git:

- ``core.fsmonitor``: a program git runs whenever it reads an index beside a work
  tree (``write-tree`` for the staged changes; every diff, run in an empty work tree
  so that no ``.gitattributes`` applies), in bare repositories too;
- ``log.showSignature``: ``git log`` would run ``gpg.program`` (or
  ``gpg.<format>.program``) on each signed commit it shows;
- ``core.pager`` and ``pager.<command>``: ``--no-pager``;
- every transport: a partial clone fetches a missing object from its promisor remote,
  running ``remote.<name>.uploadpack``, ``core.sshCommand``, ``core.gitProxy``,
  ``core.askPass``, credential helpers or a remote helper. ``GIT_ALLOW_PROTOCOL``
  empty allows no protocol, whatever ``protocol.<name>.allow`` says;
  ``GIT_NO_LAZY_FETCH`` says the same to a git that knows it (2.45 on).

Pinned where spillguard connects to a remote (``fetch_command``: the audit's fetches
and clones of its mirrors, pre-push's ``ls-remote`` of the URL pushed to):
``core.hooksPath`` (the ``reference-transaction`` hook runs for each ref a fetch
moves, ``pre-auto-gc`` for the gc it may start), ``core.fsmonitor`` and the pager as
above, ``protocol.ext.allow=never`` (a URL that is a shell command), and no terminal
prompt (a hook or an unattended audit fails where it would wait for a password). The
remote is named by its URL, never by a remote's name, so no ``remote.NAME.uploadpack``
runs. Credential helpers and ssh settings stay the user's: those ``git push`` itself
has just run, or, for a mirror, those of the configuration ``git clone`` wrote.

Under ``deadline`` (a push's or a repository's time budget), ``run`` and ``start``
bound every git by it: one still running then is killed with every process it started
(each git is the leader of its own process group: a fetch's ``git remote-http``, left
behind, would wait on a server that never answers), and none starts after it
(``GitTimeoutError``).

Not pinned, because no git spillguard runs reaches them: ``diff.external`` and
``diff.<driver>.command``/``textconv`` (every diff is asked with ``--no-ext-diff
--no-textconv``: ``sources.diffparse``), ``filter.<driver>.*`` (no command here reads
a work tree's file: diffs are of trees and the index, ``hash-object`` reads its
standard input), ``core.hooksPath`` outside fetches (nothing else here commits,
merges or moves a ref, and ``install`` must read it to install where git looks),
``core.editor``/``sequence.editor``, merge drivers, ``core.alternateRefsCommand``
(run by a fetch from a repository with alternates: a mirror has none), and
``uploadpack.packObjectsHook`` (git honours it only outside a repository's own file).
"""

from __future__ import annotations

import contextlib
import os
import time

#: As ``typing.TYPE_CHECKING`` (mypy reads it alike). ``subprocess``, ``threading``,
#: ``signal``, ``typing`` and the errors' ``enum`` are imported where first used: a
#: push with nothing to judge is answered (``answer``) in Python's own start-up time.
TYPE_CHECKING = False
if TYPE_CHECKING:
    import subprocess
    from collections.abc import Iterator, Mapping, Sequence
    from typing import IO

    #: Where a started git reads or writes: a pipe, a file, or nowhere.
    Stream = int | IO[bytes] | None

#: Before any git command: what a repository's configuration may not turn on.
_PINNED = ("--no-pager", "-c", "core.fsmonitor=false", "-c", "log.showSignature=false")
#: A fetch's own: no hook, no shell command as a URL.
_FETCH_PINNED = (
    "--no-pager",
    "-c",
    "core.fsmonitor=false",
    "-c",
    f"core.hooksPath={os.devnull}",  # read, never written: no hook is found there
    "-c",
    "protocol.ext.allow=never",
)
#: The environment that leaves git no transport (see the module's docstring).
_NO_TRANSPORT = {"GIT_ALLOW_PROTOCOL": "", "GIT_NO_LAZY_FETCH": "1"}


def command(*args: str) -> list[str]:
    """``git ARGS`` as spillguard runs every git that reads a repository."""
    return ["git", *_PINNED, *args]


def fetch_command(*args: str) -> list[str]:
    """``git ARGS`` for a fetch or clone, which reaches a remote but runs no hook."""
    return ["git", *_FETCH_PINNED, *args]


def environment(environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """``environ`` (this process's by default) as every reading git gets it: without a
    transport."""
    return {**(os.environ if environ is None else environ), **_NO_TRANSPORT}


def fetch_environment() -> dict[str, str]:
    """This process's environment for a fetch: no terminal to wait on for a password."""
    return {**os.environ, "GIT_TERMINAL_PROMPT": "0"}


def answer(argv: Sequence[str], *, stdin: bytes, env: Mapping[str, str]) -> bytes | None:
    """``argv``'s output where it succeeds, else None (git missing or failing), started
    without ``subprocess`` (whose imports cost as much as Python's own start-up): for
    the question a hook asks before the rest of spillguard loads, when no deadline is
    set yet. ``stdin`` is written whole before the output is read, so only for a git
    that reads all its input before it answers in a few lines."""
    read_in, write_in = os.pipe()
    read_out, write_out = os.pipe()
    quiet = os.open(os.devnull, os.O_WRONLY)
    actions = [
        (os.POSIX_SPAWN_DUP2, read_in, 0),
        (os.POSIX_SPAWN_DUP2, write_out, 1),
        (os.POSIX_SPAWN_DUP2, quiet, 2),
    ]
    try:
        pid = os.posix_spawnp(argv[0], list(argv), dict(env), file_actions=actions)
    except OSError:
        pid = None
    for end in (read_in, write_out, quiet):
        os.close(end)
    output = None
    with os.fdopen(write_in, "wb") as given, os.fdopen(read_out, "rb") as said:
        if pid is not None:
            with contextlib.suppress(BrokenPipeError):  # it ended without reading it all
                given.write(stdin)
            given.close()
            output = said.read()
    if pid is None:
        return None
    return output if os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]) == 0 else None


def run(
    argv: Sequence[str], *, stdin: bytes = b"", env: Mapping[str, str] | None = None
) -> subprocess.CompletedProcess[bytes]:
    """``argv`` run to its end, its output captured, in ``env`` (``environment()`` by
    default); under a deadline it is killed there (``GitTimeoutError``). Without git,
    FileNotFoundError, as ``subprocess.run`` raises it."""
    import subprocess

    from spillguard.core.errors import GitTimeoutError

    timeout = _left()
    env = environment() if env is None else env
    if timeout is None:
        return subprocess.run(argv, input=stdin, capture_output=True, check=False, env=env)
    with subprocess.Popen(
        argv,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
        start_new_session=True,
    ) as git:
        try:
            stdout, stderr = git.communicate(stdin, timeout=timeout)
        except subprocess.TimeoutExpired:
            _kill(git)
            git.communicate()
            raise GitTimeoutError from None
        except BaseException:  # interrupted: nothing it started outlives it
            _kill(git)
            raise
    return subprocess.CompletedProcess(git.args, git.returncode, stdout, stderr)


def start(
    argv: Sequence[str],
    *,
    env: Mapping[str, str],
    stdin: Stream = None,
    stdout: Stream = None,
    stderr: Stream = None,
) -> subprocess.Popen[bytes]:
    """``argv`` started, for its caller to talk to and reap; under a deadline it is
    killed there (its output then ends early, and it exits with a signal)."""
    import subprocess

    _left()
    watch = _watch
    git = subprocess.Popen(
        argv,
        stdin=stdin,
        stdout=stdout,
        stderr=stderr,
        env=env,
        start_new_session=watch is not None,
    )
    if watch is not None:
        watch.add(git)
    return git


def _kill(git: subprocess.Popen[bytes]) -> None:
    """``git`` and every process of its group (it leads one under a deadline). Once
    reaped, its number may be another's: left alone (git waits for what it started)."""
    import signal

    if git.returncode is None:
        with contextlib.suppress(OSError):  # ended meanwhile
            os.killpg(git.pid, signal.SIGKILL)


@contextlib.contextmanager
def deadline(when: float) -> Iterator[None]:
    """Every git started inside ends by ``when`` (``time.monotonic()``): a timer kills
    those still running then, and none starts after it."""
    global _watch  # noqa: PLW0603 - one deadline for the process: the hook's
    watch = _Watch(when)
    previous, _watch = _watch, watch
    try:
        yield
    finally:
        watch.cancel()
        _watch = previous


class _Watch:
    """The gits started before a deadline, killed by a timer thread when it passes."""

    def __init__(self, when: float) -> None:
        import threading

        self.when = when
        self._gits: list[subprocess.Popen[bytes]] = []
        self._lock = threading.Lock()
        self._passed = False
        self._timer = threading.Timer(max(0.0, when - time.monotonic()), self._expire)
        self._timer.daemon = True  # it never keeps the process alive
        self._timer.start()

    def add(self, git: subprocess.Popen[bytes]) -> None:
        with self._lock:
            self._gits = [each for each in self._gits if each.returncode is None]
            self._gits.append(git)
            if self._passed:  # the deadline passed as it started
                _kill(git)

    def cancel(self) -> None:
        self._timer.cancel()

    def _expire(self) -> None:
        with self._lock:
            self._passed = True
            for git in self._gits:
                _kill(git)


_watch: _Watch | None = None


def _left() -> float | None:
    """The seconds left before the deadline (None without one); GitTimeoutError past it."""
    watch = _watch
    if watch is None:
        return None
    left = watch.when - time.monotonic()
    if left <= 0:
        from spillguard.core.errors import GitTimeoutError

        raise GitTimeoutError
    return left
