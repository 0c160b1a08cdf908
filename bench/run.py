"""Benchmark spillguard on one machine, in one run, and print one table.

    python bench/run.py [--real] [--repo PATH ...] [--commits N] [--seed S] [--repeat N]
                        [--quick] [--skip-peers] [--merge-heavy]

The main table is real histories: ``--real`` times git/git and psf/requests (bare
clones under bench/work/real/, made on first use; ``$SPILLGUARD_BENCH_WORK`` moves
bench/work/), ``--repo`` any repository. Each
gets the ``git log -p --all`` floor, ``spillguard scan --all`` (ratio to the floor,
MB/s of diff text, peak memory) and gitleaks and betterleaks when installed. The
generated repository (made once, cached under bench/work/: realistic code with
planted secrets) is the reproducible smoke test: the same rows plus the recall of
the planted secrets, and pushes into a bare repository with and without the
pre-receive hook. ``spillguard hook pre-commit`` runs on a one-file change to the
first repository that has a Python file (requests with ``--real``). Commands
spillguard does not have (yet) are reported as unavailable.
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
#: Where the clones and the generated repository are kept between runs.
WORK = Path(os.environ.get("SPILLGUARD_BENCH_WORK") or BENCH / "work")
sys.path.insert(0, str(ROOT))  # the unshipped testing/ helpers (the generator)

import history  # noqa: E402 - after the path set-up above
import measure  # noqa: E402
from table import Row, render, seconds  # noqa: E402

import hooks  # noqa: E402
from testing import genrepo  # noqa: E402

PRE_COMMIT_RUNS = 30


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description="Benchmark spillguard; prints one table.")
    parser.add_argument(
        "--repo",
        action="append",
        default=[],
        metavar="PATH",
        help="also time history scans of this repository (repeatable)",
    )
    parser.add_argument(
        "--real",
        action="store_true",
        help="time git/git and psf/requests too (bare clones under bench/work/real/)",
    )
    parser.add_argument("--commits", type=int, help="commits in the generated repository (20000)")
    parser.add_argument("--seed", type=int, default=1, help="generator seed (1)")
    parser.add_argument("--repeat", type=int, help="runs per history timing, median taken (3)")
    parser.add_argument(
        "--quick",
        action="store_true",
        help="a 2,000-commit repository, one run each, a 100-commit push",
    )
    parser.add_argument(
        "--skip-peers", action="store_true", help="do not time gitleaks/betterleaks"
    )
    parser.add_argument(
        "--hooks",
        action="store_true",
        help="only the hooks: the pre-commit and the pushes, no history scan",
    )
    parser.add_argument(
        "--merge-heavy",
        action="store_true",
        help="generate branch upon branch: about one commit in fourteen a merge",
    )
    args = parser.parse_args(argv)
    args.commits = args.commits or (2000 if args.quick else 20000)
    args.repeat = args.repeat or (1 if args.quick else 3)
    if args.commits < 20 or args.repeat < 1:
        parser.error("--commits must be at least 20 and --repeat at least 1")
    return args


def _generator_version() -> str:
    """Changes whenever the generator does, so a stale cache is never reused."""
    digest = hashlib.sha256()
    for name in ("genrepo.py", "codegen.py", "tokens.py"):
        digest.update((ROOT / "testing" / name).read_bytes())
    return digest.hexdigest()[:10]


def generated(
    commits: int, seed: int, pushes: dict[str, int], *, merge_heavy: bool
) -> tuple[Path, genrepo.Generated]:
    """The cached generated repository, made (atomically) on first use."""
    shape = "-merge-heavy" if merge_heavy else ""
    sizes = "-".join(map(str, pushes.values()))
    key = f"gen-{commits}{shape}-s{seed}-{sizes}-{_generator_version()}"
    home = WORK / key
    if not (home / "meta.json").is_file():
        partial = WORK / f"{key}.partial-{os.getpid()}"
        shutil.rmtree(partial, ignore_errors=True)
        partial.mkdir(parents=True)
        print(f"generating a {commits}-commit repository in {home} ...", file=sys.stderr)
        branching = genrepo.MERGE_HEAVY if merge_heavy else genrepo.Branching()
        made = genrepo.generate(
            partial / "history.git", commits=commits, seed=seed, pushes=pushes, branching=branching
        )
        meta = {
            "commits": made.commits,
            "half": made.half,
            "tip": made.tip,
            "planted": [dataclasses.asdict(planted) for planted in made.planted],
        }
        (partial / "meta.json").write_text(json.dumps(meta, indent=1))
        shutil.rmtree(home, ignore_errors=True)
        partial.rename(home)
    meta = json.loads((home / "meta.json").read_text())
    planted = tuple(genrepo.Planted(**item) for item in meta["planted"])
    return home, genrepo.Generated(
        commits=meta["commits"], planted=planted, half=meta["half"], tip=meta["tip"]
    )


def spillguard_command() -> tuple[str, ...]:
    """The installed console script next to this Python, as a user runs it."""
    script = Path(sys.executable).with_name("spillguard")
    if script.is_file():
        return (str(script),)
    found = shutil.which("spillguard")
    return (found,) if found else (sys.executable, "-m", "spillguard")


def environment() -> dict[str, str]:
    """This Python's scripts first on PATH, so hook scripts find the same spillguard.

    Bytecode is cached as on any user's machine (a development shell that turns
    the caches off would make every start-up compile every module).
    """
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    env["GIT_TERMINAL_PROMPT"] = "0"
    return env


def check_repo(path: str) -> Path:
    resolved = Path(path).resolve()
    probe = subprocess.run(
        ["git", "-C", str(resolved), "rev-parse", "--git-dir"], capture_output=True, check=False
    )
    if probe.returncode != 0:
        raise SystemExit(f"bench: error: {path}: not a git repository")
    return resolved


#: The real histories of ``--real``: where each is cloned from, and its directory's name
#: (requests first: the pre-commit change is made to the first with a Python file).
REAL = (
    ("https://github.com/psf/requests", "requests.git"),
    ("https://github.com/git/git", "git.git"),
)


def real_repositories() -> list[Path]:
    """git/git and psf/requests as bare clones (branches and tags, as a user's clone
    has), cloned on first use; later runs time the same commits."""
    found = []
    for url, name in REAL:
        path = WORK / "real" / name
        if not path.is_dir():
            print(f"cloning {url} into {path} ...", file=sys.stderr)
            partial = path.with_name(f"{name}.partial-{os.getpid()}")
            shutil.rmtree(partial, ignore_errors=True)
            cloned = subprocess.run(
                ["git", "clone", "-q", "--bare", url, str(partial)],
                capture_output=True,
                text=True,
                check=False,
            )
            if cloned.returncode != 0:
                shutil.rmtree(partial, ignore_errors=True)
                said = (cloned.stderr.strip().splitlines() or ["git clone failed"])[-1]
                raise SystemExit(
                    f"bench: error: cannot clone {url} ({said}); --real needs the network "
                    "once, or time a clone you have with --repo PATH"
                )
            partial.rename(path)
        found.append(path)
    return found


def push_branches(*, quick: bool) -> dict[str, int]:
    """Branches of the pushes' source repository: name -> commits on top of main."""
    size = 100 if quick else 1000
    return {"bench-1": 1, f"bench-{size}": size}


def _measure(
    args: argparse.Namespace,
    home: Path,
    made: genrepo.Generated,
    extra: list[Path],
    work: Path,
) -> list[Row]:
    context = history.Context(
        spillguard=spillguard_command(),
        env=environment(),
        work=work,
        repeat=args.repeat,
        peers=not args.skip_peers,
    )
    base = home / "history.git"
    label = f"generated{', merge-heavy' if args.merge_heavy else ''}, {made.commits} commits"
    rows: list[Row] = []
    if not args.hooks:
        rows += _native_rows(base, context)
        targets = [history.Target(path, path.name) for path in extra]
        targets.append(history.Target(base, label, made.planted, made.half))
        for target in targets:
            rows += history.rows(target, context)
    runs = 10 if args.quick else PRE_COMMIT_RUNS
    source = next((path for path in extra if hooks.has_python_file(path)), base)
    rows += hooks.pre_commit_rows(source, source.name if extra else label, context, runs)
    pushes = push_branches(quick=args.quick)
    rows += hooks.push_rows(base, home / "history.git.pushes", pushes, context)
    return rows


def _native_rows(repo: Path, context: history.Context) -> list[Row]:
    """The native prefilter's database made (or found) in the user's cache before the
    scans are timed, as a user whose large scans are many has it (a scan builds it only
    where the work ahead pays for that): the steady state, its one-off cost shown."""
    probe = [sys.executable, "-c", "import hyperscan"]
    if measure.run(probe, env=context.env).code != 0:
        return [Row("native prefilter (Vectorscan)", "", "not installed")]
    command = [*context.spillguard, "scan", "--repo", str(repo), "--quiet", "HEAD~1..HEAD"]
    made = measure.run(command, env={**context.env, "SPILLGUARD_NATIVE": "1"})
    return [
        Row("native prefilter database: made or loaded", "", seconds(made.cpu_seconds) + " CPU")
    ]


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    extra = [*(real_repositories() if args.real else ()), *map(check_repo, args.repo)]
    pushes = push_branches(quick=args.quick)
    home, made = generated(args.commits, args.seed, pushes, merge_heavy=args.merge_heavy)
    # Clones, reports and push targets live only for this run (some hold the
    # planted secrets in plain text), outside the source tree.
    with tempfile.TemporaryDirectory(prefix="spillguard-bench-") as scratch:
        rows = _measure(args, home, made, extra, Path(scratch))
    print(render(rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
