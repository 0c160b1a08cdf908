"""The hooks as users meet them: a pre-commit on a one-file change, pushes into a bare repo."""

from __future__ import annotations

import shutil
import statistics
import subprocess
import sys
from typing import TYPE_CHECKING

import measure
from history import PEERS, binary_of, unavailable
from table import Row, seconds

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

    from history import Context

#: Without Betterleaks to compare with (``--skip-peers``, or not installed).
MAX_PRE_COMMIT = 0.090
#: Betterleaks' own pre-commit: the added lines of the staged changes.
BETTERLEAKS_STAGED = ("git", "--staged", "--no-banner", "--log-level", "error", "--exit-code", "0")
MAX_PUSH_EXTRA = 0.100
#: A push that only deletes refs, or moves them to commits the server has: about
#: Python's own start-up.
MAX_DELETE_EXTRA = 0.030
IMPORT_OFFENDERS = 6
# A clean one-file change: a new function appended to a Python file.
CHANGE = '\n\ndef bench_change(values):\n    """Sum the values."""\n    return sum(values)\n'


def _git(*args: str, cwd: Path) -> str:
    return subprocess.run(
        ["git", *args], cwd=cwd, check=True, capture_output=True, text=True
    ).stdout


def _fresh_clone(source: Path, destination: Path, *, bare: bool) -> None:
    shutil.rmtree(destination, ignore_errors=True)
    _git("clone", "-q", *(["--bare"] if bare else []), str(source), str(destination), cwd=source)


def _python_files(repo: Path) -> list[str]:
    listed = _git("ls-tree", "-r", "--name-only", "HEAD", cwd=repo)
    return [line for line in listed.splitlines() if line.endswith(".py")]


def has_python_file(repo: Path) -> bool:
    """Whether ``repo``'s HEAD has a Python file for the pre-commit change."""
    return bool(_python_files(repo))


def staged_change(source: Path, work: Path) -> Path:
    """A clone of ``source`` with one file changed and staged."""
    clone = work / "pre-commit"
    _fresh_clone(source, clone, bare=False)
    path = _python_files(clone)[0]
    with (clone / path).open("a", encoding="utf-8") as handle:
        handle.write(CHANGE)
    _git("add", path, cwd=clone)
    return clone


def _betterleaks(context: Context) -> str | None:
    if not context.peers:
        return None
    _, package, relative, name, _ = next(peer for peer in PEERS if peer[3] == "betterleaks")
    return binary_of(package, relative, name)


def pre_commit_rows(source: Path, label: str, context: Context, runs: int) -> list[Row]:
    """The hook on a one-file staged change, in turn with Betterleaks' own pre-commit
    (``betterleaks git --staged``) on the same change when it is installed: A B A B...,
    so that both meet the machine as it is, and their ratio is taken pair by pair."""
    clone = staged_change(source, context.work)
    command = [*context.spillguard, "hook", "pre-commit"]
    measure.run(command, cwd=clone, env=context.env)  # warm-up: caches as users have them
    peer = _betterleaks(context)
    other = None if peer is None else [peer, *BETTERLEAKS_STAGED, str(clone)]
    if other is not None:
        measure.run(other, cwd=clone, env=context.env)
    results, theirs = [], []
    for _ in range(runs):
        results.append(measure.run(command, cwd=clone, env=context.env))
        if other is not None:
            theirs.append(measure.run(other, cwd=clone, env=context.env))
    problem = unavailable(results[-1])
    if problem is not None:
        return [Row("spillguard hook pre-commit", label, problem)]
    python = measure.median_seconds(
        measure.repeat(runs, [sys.executable, "-c", "pass"], env=context.env)
    )
    median = measure.median_seconds(results)
    cpu = measure.median_cpu(results)
    title = f"spillguard hook pre-commit (median of {len(results)})"
    if not theirs or unavailable(theirs[-1]) is not None:
        rows = [
            Row(
                title,
                label,
                seconds(median),
                f"python -c pass: {seconds(python)}",
                f"<= {seconds(MAX_PRE_COMMIT)}",
                median <= MAX_PRE_COMMIT,
            )
        ]
    else:
        ratio = statistics.median(
            a.seconds / b.seconds for a, b in zip(results, theirs, strict=True)
        )
        rows = [
            Row(
                f"{title}, in turn with betterleaks",
                label,
                f"{seconds(median)}, {seconds(cpu)} CPU",
                f"betterleaks git --staged: {seconds(measure.median_seconds(theirs))}, "
                f"{seconds(measure.median_cpu(theirs))} CPU; {ratio:.2f}x",
                "<= betterleaks",
                ratio <= 1,
            ),
            Row("  python -c pass", "", seconds(python)),
        ]
    return rows + _import_rows(clone, context)


def _import_rows(clone: Path, context: Context) -> list[Row]:
    """Where start-up goes: ``python -X importtime``, largest own times first."""
    code = "import sys\nfrom spillguard.cli import main\nsys.exit(main(['hook', 'pre-commit']))"
    result = measure.run(
        [sys.executable, "-X", "importtime", "-c", code], cwd=clone, env=context.env
    )
    offenders = measure.import_offenders(result.stderr, IMPORT_OFFENDERS)
    total = sum(own for _, own in measure.import_offenders(result.stderr, 10**6))
    rows = [Row("  imports (python -X importtime)", "", f"{total:.0f} ms")]
    rows += [Row(f"    {name}", "", f"{own:.1f} ms") for name, own in offenders]
    return rows


def _push_once(source: Path, target: Path, branch: str, env: dict[str, str]) -> measure.Run:
    result = measure.run(
        ["git", "push", "-q", str(target), f"{branch}:refs/heads/bench-push"], cwd=source, env=env
    )
    # Forget the ref (the objects stay) so the next push brings the same commits again.
    subprocess.run(
        ["git", "update-ref", "-d", "refs/heads/bench-push"], cwd=target, check=False, env=env
    )
    return result


def _delete_once(source: Path, target: Path, branch: str, env: dict[str, str]) -> measure.Run:
    # The ref made again untimed (it brings no new object: the commits are there).
    subprocess.run(
        ["git", "push", "-q", str(target), f"{branch}:refs/heads/bench-delete"],
        cwd=source,
        check=False,
        env=env,
        capture_output=True,
    )
    return measure.run(
        ["git", "push", "-q", str(target), ":refs/heads/bench-delete"], cwd=source, env=env
    )


def _same_once(source: Path, target: Path, branch: str, env: dict[str, str]) -> measure.Run:
    """A push that adds no commit: a new branch at the commit ``branch`` starts from,
    which the server has (``main``'s tip)."""
    result = measure.run(
        ["git", "push", "-q", str(target), f"{branch}~1:refs/heads/bench-same"], cwd=source, env=env
    )
    subprocess.run(
        ["git", "update-ref", "-d", "refs/heads/bench-same"], cwd=target, check=False, env=env
    )
    return result


def _move_once(source: Path, target: Path, branch: str, env: dict[str, str]) -> measure.Run:
    """A push that moves a branch to a commit the server has: ``main``'s tip, from the
    commit before it (set again, untimed)."""
    before = _git("rev-parse", f"{branch}~2", cwd=source).strip()
    subprocess.run(
        ["git", "update-ref", "refs/heads/bench-move", before], cwd=target, check=False, env=env
    )
    return measure.run(
        ["git", "push", "-q", str(target), f"{branch}~1:refs/heads/bench-move"], cwd=source, env=env
    )


def _push_median(  # noqa: PLR0913 - one push, and how it is made
    source: Path,
    target: Path,
    branch: str,
    runs: int,
    env: dict[str, str],
    *,
    once: Callable[[Path, Path, str, dict[str, str]], measure.Run] = _push_once,
) -> tuple[float, str | None]:
    results = []
    for _ in range(runs):
        results.append(once(source, target, branch, env))
        if results[-1].code != 0:
            return 0.0, f"push failed: {results[-1].first_error_line[:60]}"
    return measure.median_seconds(results), None


def _server(base: Path, target: Path) -> None:
    """A bare repository as a server keeps one: housekeeping (git gc) writes a commit-graph."""
    _fresh_clone(base, target, bare=True)
    _git("commit-graph", "write", "--reachable", cwd=target)


def _install_hook(base: Path, target: Path, context: Context) -> str | None:
    _server(base, target)
    command = [*context.spillguard, "install", "pre-receive", "--repo", str(target)]
    return unavailable(measure.run(command, env=context.env))


def push_rows(base: Path, pushes: Path, branches: dict[str, int], context: Context) -> list[Row]:
    """Each branch pushed into a bare repo without a hook, then with the pre-receive hook."""
    plain, hooked = context.work / "push-plain.git", context.work / "push-hook.git"
    _server(base, plain)
    problem = _install_hook(base, hooked, context)
    rows = []
    for branch, count in branches.items():
        runs = max(3, context.repeat * 3) if count == 1 else max(1, context.repeat)
        label = f"git push, {count} commit{'s' * (count > 1)}"
        without, failed = _push_median(pushes, plain, branch, runs, context.env)
        rows.append(Row(f"{label}, no hook (median of {runs})", "", failed or seconds(without)))
        if problem is not None:
            rows.append(Row(f"{label}, pre-receive hook", "", problem))
            continue
        with_hook, failed = _push_median(pushes, hooked, branch, runs, context.env)
        extra = with_hook - without
        one = count == 1 and failed is None
        rows.append(
            Row(
                f"{label}, pre-receive hook (median of {runs})",
                "",
                failed or seconds(with_hook),
                "" if failed else f"+{seconds(extra)}",
                f"<= +{seconds(MAX_PUSH_EXTRA)}" if count == 1 else "",
                extra <= MAX_PUSH_EXTRA if one else None,
            )
        )
    if problem is None:
        rows += _delete_rows(pushes, plain, hooked, next(iter(branches)), context)
    return rows


def _paired_rows(  # noqa: PLR0913 - the push, how it is made, what it is measured against
    label: str,
    once: Callable[[Path, Path, str, dict[str, str]], measure.Run],
    servers: tuple[Path, Path, Path],
    branch: str,
    *,
    context: Context,
    target: float | None = None,
) -> list[Row]:
    """A push without and with the hook (medians), and the hook's cost."""
    source, plain, hooked = servers
    runs = max(3, context.repeat * 3)
    without, failed = _push_median(source, plain, branch, runs, context.env, once=once)
    rows = [Row(f"{label}, no hook (median of {runs})", "", failed or seconds(without))]
    with_hook, failed = _push_median(source, hooked, branch, runs, context.env, once=once)
    extra = with_hook - without
    rows.append(
        Row(
            f"{label}, pre-receive hook (median of {runs})",
            "",
            failed or seconds(with_hook),
            "" if failed else f"+{seconds(extra)}",
            "" if target is None else f"<= +{seconds(target)}",
            None if failed or target is None else extra <= target,
        )
    )
    return rows


def _delete_rows(
    source: Path, plain: Path, hooked: Path, branch: str, context: Context
) -> list[Row]:
    """A push that only deletes a branch, one that adds no commit (a new branch at a
    commit the server has) and one that moves a branch to such a commit, without and
    with the hook: nothing to judge, but the new branch's name."""
    servers = (source, plain, hooked)
    deleting = "git push deleting a branch"
    rows = _paired_rows(
        deleting, _delete_once, servers, branch, context=context, target=MAX_DELETE_EXTRA
    )
    adding = "git push adding no commit (a new branch)"
    rows += _paired_rows(adding, _same_once, servers, branch, context=context)
    moving = "git push moving a branch to a commit the server has"
    return rows + _paired_rows(
        moving, _move_once, servers, branch, context=context, target=MAX_DELETE_EXTRA
    )
