"""A repository's configuration file as read from git or the disk: (text, source), or None.

Below both ``loading`` (which reads the files of a scan) and ``config_source`` (which
reads them from the default branch), so neither imports the other for these.
"""

from __future__ import annotations

from collections.abc import Callable

from spillguard.core.errors import ConfigError

#: (text, source) of a per-repository file read from somewhere other than the disk
#: (the index, a commit), or None when there is none.
RepositoryText = tuple[str, str] | None

#: Reads one repository file by name: (text, source), or None when there is none.
FileReader = Callable[[str], RepositoryText]

#: A per-repository file larger than this is no configuration file.
MAX_REPOSITORY_FILE = 1024 * 1024


def decoded(data: bytes | None, source: str) -> RepositoryText:
    """A file read from git as (text, source); None stays None, non-UTF-8 is an error."""
    if data is None:
        return None
    try:
        return data.decode("utf-8-sig"), source
    except UnicodeDecodeError:
        raise ConfigError(f"{source}: not UTF-8 text") from None
