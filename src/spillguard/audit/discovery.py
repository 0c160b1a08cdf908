"""Which repositories an audit covers: a server's tree, paths, or a file of clone URLs.

A git server stores bare repositories in project folders (``PROJECT/NAME.git``): a
repository is named ``PROJECT/NAME`` as the server names it, and is known by its
location (``locations``). Clone URLs are mirrored (bare) under the clone folder and
fetched again on later audits (``mirror``).

A tree is walked without leaving it: a symbolic link that leads out of the folder
given is not followed, and says so. The same repository found twice (a link, a URL
given twice) is audited once; two repositories with one name are both refused, never
merged into one.
"""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path

from spillguard.audit.locations import (
    CloneUrl,
    LocationError,
    folder_identity,
    folder_name,
    inside,
    is_url,
    mirror_folder,
    parse_clone_url,
)
from spillguard.audit.model import Outcome, Repository
from spillguard.core.errors import UsageError


@dataclasses.dataclass(frozen=True, slots=True)
class _Found:
    repository: Repository
    #: Where it is fetched from; None for a folder.
    url: CloneUrl | None = None
    #: Why it is not audited (a link out of the tree, a URL that cannot be fetched).
    refused: str | None = None

    @property
    def where(self) -> str:
        return self.repository.path if self.url is None else self.url.shown


def _is_repository(path: Path) -> bool:
    return (path / "HEAD").is_file() or (path / ".git").exists()


def _folder(path: Path) -> _Found:
    project, name = folder_name(path)
    return _Found(
        Repository(project=project, name=name, path=str(path), identity=folder_identity(path))
    )


def _link_out(path: Path, root: Path) -> _Found:
    """A link the walk does not follow, known by the link itself (where it lies)."""
    project, name = folder_name(path)
    where = str(Path(os.path.realpath(path.parent), path.name))
    reason = f"a symbolic link out of {root} (to {os.path.realpath(path)}); not followed"
    repository = Repository(project=project, name=name, path=str(path), identity=where)
    return _Found(repository, refused=reason)


def _folders(folder: Path) -> list[os.DirEntry[str]]:
    """The folders in ``folder``, links to folders included, by name: one listing."""
    with os.scandir(folder) as entries:
        return sorted((entry for entry in entries if entry.is_dir()), key=lambda e: e.name)


def _is_named_repository(path: Path, name: str) -> bool:
    # The name first: a server's NAME.git costs no lookup.
    return (name.endswith(".git") and name != ".git") or _is_repository(path)


@dataclasses.dataclass(frozen=True, slots=True)
class _Walked:
    """A folder of the tree as its repositories are named and known: where it was
    found, and its resolved path. Each of ten thousand repositories in it is then
    named and resolved from its own name alone (only a link is resolved again)."""

    path: Path
    real: str

    @property
    def project(self) -> str:
        return Path(os.path.normpath(self.path.absolute())).name  # as ``folder_name``


def _resolved(folder: _Walked, entry: os.DirEntry[str], path: Path) -> str:
    return (
        folder_identity(path) if entry.is_symlink() else f"{folder.real.rstrip('/')}/{entry.name}"
    )


def _in_folder(folder: _Walked, project: str, entry: os.DirEntry[str], path: Path) -> _Found:
    name = entry.name.removesuffix(".git") or entry.name
    where = _resolved(folder, entry, path)
    return _Found(Repository(project=project, name=name, path=str(path), identity=where))


def _tree(root: Path) -> list[_Found]:
    """The repositories in ``root`` and in its project folders, one level down."""
    found: list[_Found] = []
    top = _Walked(root, folder_identity(root))
    for entry in _folders(root):
        child = root / entry.name
        if entry.is_symlink() and not inside(child, root):
            found.append(_link_out(child, root))
        elif _is_named_repository(child, entry.name):
            found.append(_in_folder(top, top.project, entry, child))
        else:
            project = _Walked(child, _resolved(top, entry, child))
            named = project.project
            for inner in _folders(child):
                grandchild = child / inner.name
                if inner.is_symlink() and not inside(grandchild, root):
                    found.append(_link_out(grandchild, root))
                elif _is_named_repository(grandchild, inner.name):
                    found.append(_in_folder(project, named, inner, grandchild))
    return found


def _url(line: str, clone_dir: Path) -> _Found:
    try:
        url = parse_clone_url(line)
    except LocationError as error:
        from spillguard.audit.locations import HIDDEN

        # Not read, so not known to be free of credentials: only its start is shown.
        shown = line.split("://", 1)[0] + ("://" + HIDDEN if "://" in line else "")
        repository = Repository(project="clones", name=shown, path="", identity=shown)
        return _Found(repository, refused=f"cannot fetch {shown}: {error}")
    folder = mirror_folder(url, clone_dir)
    repository = Repository(
        project=url.project, name=url.name, path=str(folder), identity=url.identity
    )
    return _Found(repository, url=url)


def _listed(path: Path, clone_dir: Path) -> list[_Found]:
    lines = (line.strip() for line in path.read_text(encoding="utf-8").splitlines())
    return [
        _url(line, clone_dir) if is_url(line) else _folder(Path(line))
        for line in lines
        if line and not line.startswith("#")
    ]


def _linked(item: _Found) -> tuple[bool, bool]:
    """Whether a folder was found through a linked folder, and whether it is a link."""
    if item.url is not None:
        return False, False
    path = Path(os.path.normpath(Path(item.repository.path).absolute()))
    return os.path.realpath(path.parent) != str(path.parent), path.is_symlink()


def _without_collisions(found: list[_Found]) -> list[_Found]:
    """Each repository once; every repository sharing its name with another refused."""
    first: dict[str, _Found] = {}
    for item in found:
        known = first.get(item.repository.identity)
        if known is None or _linked(item) < _linked(known):
            first[item.repository.identity] = item  # by its own folder rather than a link
    unique = list(first.values())
    by_name: dict[str, list[_Found]] = {}
    for item in unique:
        if item.refused is None:
            by_name.setdefault(item.repository.key, []).append(item)
    return [_collided(item, by_name) for item in unique]


def _collided(item: _Found, by_name: dict[str, list[_Found]]) -> _Found:
    others = [other.where for other in by_name.get(item.repository.key, ()) if other is not item]
    if not others or item.refused is not None:
        return item
    reason = (
        f"name collision: {item.where} and {', '.join(others)} share the name "
        f"{item.repository.key}; not audited (give each its own --state)"
    )
    return dataclasses.replace(item, refused=reason)


def discover(
    paths: tuple[str, ...], clone_dir: Path, budget: float | None = None
) -> tuple[list[Repository], list[Outcome]]:
    """The repositories to audit, and those that cannot be (with why); each mirror is
    fetched within ``budget`` seconds."""
    from spillguard.audit.mirror import MirrorError, mirror

    found: list[_Found] = []
    for given in paths:
        path = Path(given)
        if path.is_file():
            found.extend(_listed(path, clone_dir))
        elif path.is_dir():
            found.extend([_folder(path)] if _is_repository(path) else _tree(path))
        else:
            raise UsageError(f"audit {given}: no such directory or file")
    audited: list[Repository] = []
    failed: list[Outcome] = []
    for item in _without_collisions(found):
        refused = item.refused
        if refused is None and item.url is not None:
            try:
                mirror(item.url, Path(item.repository.path), clone_dir, budget)
            except MirrorError as error:
                refused = str(error)
        if refused is None:
            audited.append(item.repository)
        else:
            failed.append(Outcome(repository=item.repository, error=refused))
    return audited, failed
