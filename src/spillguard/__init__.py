"""spillguard: keep secrets out of Git repositories."""

from __future__ import annotations


def __getattr__(name: str) -> str:
    # importlib.metadata costs tens of milliseconds; hooks run on every commit,
    # so the version is looked up only when someone asks for it.
    if name == "__version__":
        from importlib.metadata import PackageNotFoundError, version

        try:
            return version("spillguard")
        except PackageNotFoundError:  # pragma: no cover - running from a source tree
            return "0+unknown"
    raise AttributeError(name)


__all__ = ["__version__"]
