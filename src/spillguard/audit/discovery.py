"""Which repositories an audit covers: a server's tree, paths, or a file of clone URLs.

A git server stores bare repositories in project folders (``PROJECT/NAME.git``): a
repository is named ``PROJECT/NAME`` as the server names it. Clone URLs are mirrored
(bare) under the clone folder and fetched again on later audits.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

from spillguard.audit.model import Outcome, Repository
from spillguard.core.errors import UsageError


def _is_repository(path: Path) -> bool:
    return (path / "HEAD").is_file() or (path / ".git").exists()


def _named(path: Path) -> Repository:
    name = path.name.removesuffix(".git") or path.name
    return Repository(project=path.resolve().parent.name, name=name, path=str(path))


def _tree(root: Path) -> list[Repository]:
    """The repositories in ``root`` and in its project folders, one level down."""
    found: list[Repository] = []
    for child in sorted(root.iterdir()):
        if not child.is_dir():
            continue
        if _is_repository(child) or child.suffix == ".git":
            found.append(_named(child))
        else:
            found.extend(
                _named(grandchild)
                for grandchild in sorted(child.iterdir())
                if grandchild.is_dir()
                and (_is_repository(grandchild) or grandchild.suffix == ".git")
            )
    return found


def _is_url(line: str) -> bool:
    return "://" in line or (line.startswith("git@") and ":" in line)


def _mirror(url: str, clone_dir: Path) -> Repository | Outcome:
    """A bare copy of ``url`` under ``clone_dir``: cloned once, fetched after."""
    parts = url.rstrip("/").replace(":", "/").split("/")
    name = parts[-1].removesuffix(".git")
    project = parts[-2] if len(parts) > 1 else "clones"
    destination = clone_dir / project / f"{name}.git"
    repository = Repository(project=project, name=name, path=str(destination))
    if destination.exists():
        command = ["git", "--git-dir", str(destination), "fetch", "--quiet", "--prune", "origin",
                   "+refs/heads/*:refs/heads/*"]  # fmt: skip
    else:
        destination.parent.mkdir(parents=True, exist_ok=True)
        command = ["git", "clone", "--quiet", "--bare", "--", url, str(destination)]
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        reason = (done.stderr.strip().splitlines() or ["git failed"])[-1]
        return Outcome(repository=repository, error=f"cannot fetch {url}: {reason}")
    return repository


def discover(paths: tuple[str, ...], clone_dir: Path) -> tuple[list[Repository], list[Outcome]]:
    """The repositories to audit, and those that could not even be fetched."""
    found: list[Repository] = []
    failed: list[Outcome] = []
    for given in paths:
        path = Path(given)
        if path.is_file():
            lines = path.read_text(encoding="utf-8").splitlines()
            for line in (line.strip() for line in lines):
                if not line or line.startswith("#"):
                    continue
                if not _is_url(line):
                    found.append(_named(Path(line)))
                    continue
                mirrored = _mirror(line, clone_dir)
                (found if isinstance(mirrored, Repository) else failed).append(mirrored)  # type: ignore[arg-type]
        elif path.is_dir():
            found.extend([_named(path)] if _is_repository(path) else _tree(path))
        else:
            raise UsageError(f"audit {given}: no such directory or file")
    return found, failed
