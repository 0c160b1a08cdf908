"""Generate a repository of realistic code with planted secrets, fast, with git fast-import.

The history has a main line, feature branches (most merged back with a merge commit,
some left unmerged so only ``--all`` reaches them), tags, and a handful of secrets
planted at random commits. The secrets are generated at run time from templates
(testing/tokens.py), so this file holds no credential. The same seed gives the
same history, byte for byte.
"""

from __future__ import annotations

import dataclasses
import random
import subprocess
import zlib
from typing import IO, TYPE_CHECKING

from testing import codegen
from testing.tokens import expand

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from pathlib import Path

# The key header is split so that no scanner mistakes this file for a key.
_KEY_HEADER = "-----BEGIN " + "RSA PRIVATE KEY-----"
_KEY_FOOTER = "-----END " + "RSA PRIVATE KEY-----"
#: Planted secrets: kind -> lines (the secret is on the first one).
SECRETS = {
    "aws-access-key-id": ['AWS_ACCESS_KEY_ID = "AKIA{rand:A2:16}"'],
    "aws-secret-access-key": ['aws_secret_access_key = "{rand:b64:40}"'],
    "password": ['DB_PASSWORD = "{rand:Aa0:18}"'],
    "github-token": ['GITHUB_TOKEN = "ghp_{rand:Aa0:30}{crc32}"'],
    "slack-token": ['SLACK_TOKEN = "xoxb-{rand:0:12}-{rand:0:12}-{rand:Aa0:24}"'],
    "private-key": [_KEY_HEADER, *["{rand:b64:64}"] * 4, _KEY_FOOTER],
}
AUTHORS = ("Ada Lovelace", "Grace Hopper", "Alan Turing", "Edsger Dijkstra", "Barbara Liskov")
MAX_FILES = 600
START_TIME = 1_546_300_800  # 2019-01-01


@dataclasses.dataclass(frozen=True, slots=True)
class Planted:
    """A secret the generator put in: the commit that adds it, and where."""

    commit: str
    path: str
    line: int
    kind: str


@dataclasses.dataclass(frozen=True, slots=True)
class Generated:
    commits: int
    planted: tuple[Planted, ...]
    #: A main-line commit about half way through the history.
    half: str
    tip: str


@dataclasses.dataclass(frozen=True, slots=True)
class Branching:
    """How often feature branches happen."""

    #: The chance that a feature branch starts at a main-line commit.
    start: float = 1 / 100
    #: While one is open, the chance that the next commit is the branch's, not main's.
    stay: float = 0.6


#: Branch upon branch, each merged back (or not) in turn: about one commit in fourteen
#: is a merge, each of a branch of 2 to 12 commits, as where every change is a pull
#: request.
MERGE_HEAVY = Branching(start=1 / 3, stay=0.8)


@dataclasses.dataclass(slots=True)
class _Feature:
    ref: str
    base: str
    tip: str
    state: dict[str, tuple[str, ...]]
    length: int
    made: int = 0
    changed: set[str] = dataclasses.field(default_factory=set)


Changes = dict[str, tuple[str, ...]]


class _Writer:
    """Writes one fast-import stream."""

    def __init__(self, stream: IO[bytes], rng: random.Random) -> None:
        self.stream = stream
        self.rng = rng
        self.mark = 0
        self.time = START_TIME

    def data(self, text: str) -> None:
        raw = text.encode()
        self.stream.write(b"data %d\n%s\n" % (len(raw), raw))

    def commit(self, ref: str, parents: list[str], changes: Changes, message: str) -> str:
        """Write a commit on ``ref``; returns its mark (``:N``)."""
        self.mark += 1
        self.time += self.rng.randint(600, 6 * 3600)
        author = self.rng.choice(AUTHORS)
        email = author.lower().replace(" ", ".") + "@example.com"
        signature = f"{author} <{email}> {self.time} +0000"
        self.stream.write(
            f"commit {ref}\nmark :{self.mark}\nauthor {signature}\ncommitter {signature}\n".encode()
        )
        self.data(message)
        for verb, parent in zip(("from", "merge"), parents, strict=False):
            self.stream.write(f"{verb} {parent}\n".encode())
        for path in sorted(changes):
            self.stream.write(f"M 100644 inline {path}\n".encode())
            self.data("\n".join(changes[path]) + "\n")
        self.stream.write(b"\n")
        return f":{self.mark}"

    def tag(self, name: str, target: str) -> None:
        self.stream.write(f"reset refs/tags/{name}\nfrom {target}\n\n".encode())


class _History:
    """The model of the repository being generated: each branch's file contents."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.seed = seed
        self.main: Changes = {}
        self.tip = ""
        self.secrets = 0
        #: (mark, path, line, kind) of each planted secret.
        self.planted: list[tuple[str, str, int, str]] = []

    def new_path(self, state: Changes) -> str:
        rng = self.rng
        while True:
            extension = rng.choice(codegen.EXTENSIONS)
            folder = {
                ".py": f"src/{rng.choice(codegen.WORDS)}",
                ".js": "web/src",
                ".go": f"services/{rng.choice(codegen.WORDS)}",
                ".yaml": "config",
                ".md": "docs",
            }[extension]
            path = f"{folder}/{codegen.name(rng)}{extension}"
            if path not in state:
                return path

    def new_file(self, path: str) -> tuple[str, ...]:
        return tuple(codegen.new_file(_extension(path), self.rng))

    def mutate(self, path: str, lines: tuple[str, ...]) -> tuple[str, ...]:
        """The file with one edit: a block inserted, a few lines replaced, or some deleted."""
        rng = self.rng
        result = list(lines)
        choice = rng.random()
        if len(result) > 400:
            start = rng.randrange(len(result) - 60)
            del result[start : start + rng.randint(20, 60)]
        elif choice < 0.55 or len(result) < 40:
            at = rng.randint(0, len(result))
            result[at:at] = codegen.block(_extension(path), rng)
        elif choice < 0.85:
            for _ in range(rng.randint(1, 4)):
                result[rng.randrange(len(result))] = codegen.line(_extension(path), rng)
        else:
            start = rng.randrange(len(result) - 10)
            del result[start : start + rng.randint(2, 10)]
        return tuple(result)

    def changes(self, state: Changes, parity: int | None) -> Changes:
        """Edit 1 to 3 files (of one parity, if given), sometimes add one; updates ``state``."""
        rng = self.rng
        edits: Changes = {}
        if len(state) < MAX_FILES and rng.random() < 0.03:
            path = self.new_path(state)
            edits[path] = self.new_file(path)
        paths = [path for path in state if parity is None or _parity(path) == parity]
        for path in rng.sample(paths, min(len(paths), rng.choice((1, 1, 1, 2, 2, 3)))):
            edits[path] = self.mutate(path, state[path])
        state.update(edits)
        return edits

    def plant(self, state: Changes, edits: Changes, mark: str) -> None:
        """Insert a secret into one of the next commit's edited files."""
        path = min(edits)
        lines = list(edits[path])
        kind = list(SECRETS)[self.secrets % len(SECRETS)]
        self.secrets += 1
        secret = [
            expand(text, f"{self.seed}-{self.secrets}-{index}")
            for index, text in enumerate(SECRETS[kind])
        ]
        at = self.rng.randint(0, len(lines))
        lines[at:at] = secret
        state[path] = edits[path] = tuple(lines)
        self.planted.append((mark, path, at + 1, kind))


def _extension(path: str) -> str:
    return path[path.rfind(".") :]


def _parity(path: str) -> int:
    return zlib.crc32(path.encode()) % 2


def _message(rng: random.Random) -> str:
    return f"{rng.choice(codegen.VERBS).capitalize()} the {codegen.name(rng).replace('_', ' ')}\n"


class _Run:
    """One pass of the generator over ``commits`` commits."""

    def __init__(
        self, history: _History, writer: _Writer, commits: int, secrets: int, branching: Branching
    ) -> None:
        self.history = history
        self.branching = branching
        self.writer = writer
        self.commits = commits
        rng = history.rng
        self.plant_at = set(rng.sample(range(10, commits), min(secrets, max(commits - 10, 0))))
        self.feature: _Feature | None = None
        self.features = 0
        self.count = 0

    def main_commit(self, parity: int | None) -> None:
        history = self.history
        edits = history.changes(history.main, parity)
        if self.count in self.plant_at:
            history.plant(history.main, edits, f":{self.writer.mark + 1}")
        history.tip = self.writer.commit(
            "refs/heads/main", [history.tip], edits, _message(history.rng)
        )
        self.count += 1
        if self.count % 500 == 0:
            self.writer.tag(f"v0.{self.count // 500}", history.tip)

    def feature_commit(self, feature: _Feature) -> None:
        history = self.history
        edits = history.changes(feature.state, 0)
        feature.changed.update(edits)
        if self.count in self.plant_at:
            history.plant(feature.state, edits, f":{self.writer.mark + 1}")
        feature.tip = self.writer.commit(feature.ref, [feature.tip], edits, _message(history.rng))
        feature.made += 1
        self.count += 1
        if feature.made < feature.length:
            return
        self.feature = None
        if history.rng.random() < 0.15:
            return  # left unmerged: only --all reaches it
        merged = {path: feature.state[path] for path in feature.changed}
        history.main.update(merged)
        message = f"Merge branch '{feature.ref.removeprefix('refs/heads/')}'\n"
        history.tip = self.writer.commit(
            "refs/heads/main", [history.tip, feature.tip], merged, message
        )
        self.count += 1

    def start_feature(self) -> _Feature:
        self.features += 1
        return _Feature(
            ref=f"refs/heads/feature/{self.features}",
            base=self.history.tip,
            tip=self.history.tip,
            state=dict(self.history.main),
            length=self.history.rng.randint(2, 12),
        )

    def step(self) -> None:
        rng = self.history.rng
        if self.feature is None and self.count > 20 and rng.random() < self.branching.start:
            self.feature = self.start_feature()
        if self.feature is None:
            self.main_commit(None)
        elif rng.random() < self.branching.stay:
            self.feature_commit(self.feature)
        else:
            self.main_commit(1)


def _initial(history: _History, writer: _Writer) -> None:
    for _ in range(60):
        path = history.new_path(history.main)
        history.main[path] = history.new_file(path)
    history.tip = writer.commit("refs/heads/main", [], dict(history.main), "Initial import\n")


def _fast_import(repo: Path, write: Callable[[IO[bytes]], None]) -> dict[str, str]:
    """Feed ``write``'s stream to git fast-import in ``repo``; returns mark -> commit id."""
    marks = repo / "generator-marks"
    with subprocess.Popen(
        ["git", "fast-import", "--quiet", f"--export-marks={marks}"],
        cwd=repo,
        stdin=subprocess.PIPE,
    ) as process:
        assert process.stdin is not None
        write(process.stdin)
        process.stdin.close()
        if process.wait() != 0:
            raise RuntimeError(f"git fast-import failed in {repo}")
    table = dict(line.split() for line in marks.read_text().splitlines())
    marks.unlink()
    return table


def generate(  # noqa: PLR0913 - keyword-only knobs of one history
    target: Path,
    *,
    commits: int,
    seed: int = 0,
    secrets: int = 8,
    pushes: Mapping[str, int] | None = None,
    branching: Branching = Branching(),
) -> Generated:
    """Create a bare repository at ``target`` with about ``commits`` commits.

    ``pushes`` maps branch names to commit counts: those branches continue the
    main line with clean commits, and are written to a bare clone at
    ``target`` + ``.pushes`` (the history to push somewhere that lacks them).
    """
    subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(target)], check=True)
    history = _History(seed)
    halves: list[str] = []

    def write_history(stream: IO[bytes]) -> None:
        writer = _Writer(stream, history.rng)
        _initial(history, writer)
        run = _Run(history, writer, commits, secrets, branching)
        run.count = 1
        while run.count < commits:
            run.step()
            if run.count <= commits // 2:
                halves[:] = [history.tip]

    marks = _fast_import(target, write_history)
    planted = tuple(
        Planted(commit=marks[mark], path=path, line=line, kind=kind)
        for mark, path, line, kind in history.planted
    )
    generated = Generated(
        commits=commits, planted=planted, half=marks[halves[-1]], tip=marks[history.tip]
    )
    if pushes:
        _write_pushes(target, history, generated.tip, pushes)
    return generated


def _write_pushes(target: Path, history: _History, tip: str, pushes: Mapping[str, int]) -> None:
    destination = target.with_name(target.name + ".pushes")
    subprocess.run(
        ["git", "clone", "-q", "--bare", "--local", str(target), str(destination)], check=True
    )
    base_state = dict(history.main)

    def write(stream: IO[bytes]) -> None:
        writer = _Writer(stream, history.rng)
        writer.mark = 10_000_000
        for branch, count in pushes.items():
            state = dict(base_state)
            parent = tip
            for _ in range(count):
                edits = history.changes(state, None)
                parent = writer.commit(
                    f"refs/heads/{branch}", [parent], edits, _message(history.rng)
                )

    _fast_import(destination, write)
