"""A large estate of small bare repositories, built in seconds and cached under bench/work/.

Ten thousand ``git init`` and ``git fast-import`` runs take minutes; a server's forks
share their objects anyway. So the histories of ``GROUP`` repositories are written by
one fast-import into a template, each repository on its own branches (``rN``: main,
``dN``: develop), with distinct content; each repository is then a bare folder whose
pack is a hard link to its template's, with its own ``HEAD`` and ``packed-refs``. Each
repository reaches only its own commits. One repository in ``SECRET_EVERY`` holds a
blocking secret, so the state records findings too.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from testing.estate import AWS_SECRET, START
from testing.tokens import expand

#: Repositories whose histories share one template (and one pack).
GROUP = 500
SECRET_EVERY = 100
#: Repositories in one project folder.
PER_PROJECT = 100
#: Bumped when the layout changes, so a cached estate of an older layout is not reused.
LAYOUT = 1
_CONFIG = b"[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n\tbare = true\n"


def _history(index: int, commits: int) -> bytes:
    """fast-import commands for repository ``index``: ``commits`` on main, one on develop."""
    out: list[bytes] = []
    for number in range(commits):
        text = f"VALUE_{number} = {number}  # repository {index}\n" * 20
        if number == commits - 1 and index % SECRET_EVERY == SECRET_EVERY - 1:
            text += expand(AWS_SECRET, index) + "\n"
        out.append(_commit(f"r{index}", f"src/m{number % 7}.py", text, START + number))
    out.append(_commit(f"d{index}", "notes.txt", f"work {index}\n", START + commits,
                       parent=f"refs/heads/r{index}"))  # fmt: skip
    return b"".join(out)


def _commit(branch: str, path: str, text: str, when: int, parent: str | None = None) -> bytes:
    data, message = text.encode(), f"change on {branch}\n".encode()
    parts = [
        f"commit refs/heads/{branch}\n".encode(),
        f"committer Ada Tester <ada@example.com> {when} +0000\n".encode(),
        b"data %d\n%s" % (len(message), message),
        f"from {parent}\n".encode() if parent else b"",
        b"M 100644 inline %s\ndata %d\n%s\n" % (path.encode(), len(data), data),
    ]
    return b"".join(parts)


def _template(folder: Path, first: int, commits: int) -> dict[str, str]:
    """The template of repositories ``first`` to ``first + GROUP - 1``: its refs."""
    if not (folder / "packed-refs").is_file():
        temporary = folder.with_name(folder.name + ".tmp")
        subprocess.run(["rm", "-rf", str(temporary)], check=True)
        subprocess.run(["git", "init", "-q", "--bare", str(temporary)], check=True)
        stream = b"".join(_history(index, commits) for index in range(first, first + GROUP))
        git = ["git", "--git-dir", str(temporary)]
        subprocess.run([*git, "fast-import", "--quiet"], input=stream, check=True)
        subprocess.run([*git, "pack-refs", "--all"], check=True)
        temporary.rename(folder)
    refs = {}
    for line in (folder / "packed-refs").read_text().splitlines():
        if not line.startswith(("#", "^")):
            sha, name = line.split(" ", 1)
            refs[name] = sha
    return refs


def _repository(path: Path, packs: list[Path], main: str, develop: str) -> None:
    for sub in ("objects/pack", "objects/info", "refs/heads", "refs/tags"):
        (path / sub).mkdir(parents=True)
    for pack in packs:
        os.link(pack, path / "objects" / "pack" / pack.name)
    (path / "HEAD").write_bytes(b"ref: refs/heads/main\n")
    (path / "config").write_bytes(_CONFIG)
    (path / "packed-refs").write_text(
        f"# pack-refs with: peeled fully-peeled sorted \n{develop} refs/heads/develop\n"
        f"{main} refs/heads/main\n"
    )


def estate(cache: Path, repositories: int, commits: int) -> Path:
    """The tree of ``repositories`` bare repositories (``PROJECT/NAME.git``), built once."""
    base = cache / f"layout{LAYOUT}-commits{commits}"
    root = base / f"estate{repositories}"
    if (root / ".complete").is_file():
        return root
    subprocess.run(["rm", "-rf", str(root)], check=True)
    for first in range(0, repositories, GROUP):
        template = base / "templates" / f"group{first // GROUP:03d}.git"
        template.parent.mkdir(parents=True, exist_ok=True)
        refs = _template(template, first, commits)
        packs = sorted((template / "objects" / "pack").iterdir())
        for index in range(first, min(first + GROUP, repositories)):
            path = root / f"project{index // PER_PROJECT:03d}" / f"repo{index:05d}.git"
            _repository(path, packs, refs[f"refs/heads/r{index}"], refs[f"refs/heads/d{index}"])
    (root / ".complete").write_text("")
    return root
