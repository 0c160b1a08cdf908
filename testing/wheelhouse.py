"""An offline wheelhouse repacked from the installed distributions of this environment.

The pre-commit framework installs a hook repository with pip into a fresh virtual
environment. To run that offline, pip gets ``--no-index`` and a ``--find-links``
directory holding spillguard's dependencies and its build backend as wheels,
zipped from what is already installed here (an installed distribution is an
unpacked wheel: its files plus its ``.dist-info``).
"""

from __future__ import annotations

import importlib.metadata
import zipfile
from typing import TYPE_CHECKING

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

if TYPE_CHECKING:
    from collections.abc import Iterable
    from pathlib import Path


def requirement_closure(roots: Iterable[str]) -> list[importlib.metadata.Distribution]:
    """The installed distributions that ``roots`` need, transitively (no extras)."""
    found: dict[str, importlib.metadata.Distribution] = {}
    pending = list(roots)
    while pending:
        requirement = Requirement(pending.pop())
        if requirement.marker is not None and not requirement.marker.evaluate({"extra": ""}):
            continue
        key = canonicalize_name(requirement.name)
        if key in found:
            continue
        found[key] = importlib.metadata.distribution(requirement.name)
        pending.extend(found[key].requires or ())
    return list(found.values())


def repack(distribution: importlib.metadata.Distribution, directory: Path) -> Path:
    """A wheel of an installed distribution; generated scripts and byte code are left out."""
    wheel_info = distribution.read_text("WHEEL") or ""
    tag = next(
        line.split(":", 1)[1].strip() for line in wheel_info.splitlines() if line.startswith("Tag:")
    )
    name = distribution.metadata["Name"].replace("-", "_").replace(".", "_")
    target = directory / f"{name}-{distribution.version}-{tag}.whl"
    with zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as archive:
        for file in distribution.files or ():
            relative = file.as_posix()
            if relative.startswith("..") or "__pycache__" in relative:
                continue
            source = distribution.locate_file(file)
            if source.is_file():  # type: ignore[union-attr]
                archive.write(str(source), relative)
    return target


def build_wheelhouse(roots: Iterable[str], directory: Path) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    for distribution in requirement_closure(roots):
        repack(distribution, directory)
    return directory
