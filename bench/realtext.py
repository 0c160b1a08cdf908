"""Precision on real text nobody here wrote: findings per million lines of clean code.

    python bench/realtext.py [--corpus NAME ...] [--show] [--plaintext]

Every file under each corpus's roots is read as ``spillguard scan --files`` reads it
(binaries as their printable runs, ``.pyc`` files included) and judged by the built-in
rules. The corpora are installed code and two public repositories, all clean of real
secrets, so every finding is a false positive to read and explain:

- ``debian-python``: the Python packages Debian installed (``/usr/lib/python3*``);
- ``pypi``: the packages pip installed into this interpreter's environment;
- ``c-headers``: ``/usr/include``;
- ``git``, ``requests``: the newest tree of git/git and psf/requests, from a mirror
  (``--mirror-root``, where the search tool's ``fetch`` puts them) or skipped.

Findings are listed with ``--show``, masked unless ``--plaintext``.
"""

from __future__ import annotations

import argparse
import collections
import subprocess
import sys
import sysconfig
import tarfile
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

from spillguard.configuration.rules import builtin_rules
from spillguard.core.models import Finding, Fragment, RuleSet
from spillguard.detection.engine import Scanner
from spillguard.detection.redact import mask_match
from spillguard.sources.files import list_files, read_files

if TYPE_CHECKING:
    from collections.abc import Iterator

MIRRORS = {"git": "git+git", "requests": "psf+requests"}
BATCH = 256
MAX_SIZE = 50 * 1024 * 1024


def _installed_roots() -> dict[str, list[Path]]:
    debian = sorted(p for p in Path("/usr/lib").glob("python3*") if p.is_dir())
    purelib = Path(sysconfig.get_paths()["purelib"])
    return {
        "debian-python": debian,
        "pypi": [purelib] if purelib.is_dir() else [],
        "c-headers": [Path("/usr/include")],
    }


def _mirror_tree(name: str, mirror_root: Path, work: Path) -> list[Path]:
    """The newest tree of a mirrored repository, written out under ``work``."""
    repo = mirror_root / MIRRORS[name] / "repo"
    if not repo.is_dir():
        return []
    archive = subprocess.run(
        ["git", f"--git-dir={repo}", "archive", "--format=tar", "HEAD"],
        check=True,
        capture_output=True,
    ).stdout
    target = work / name
    target.mkdir()
    archive_path = work / f"{name}.tar"
    archive_path.write_bytes(archive)
    with tarfile.open(archive_path) as tar:
        tar.extractall(target, filter="data")
    return [target]


def _fragments(roots: list[Path]) -> Iterator[Fragment]:
    for root in roots:
        for item in read_files(list_files([str(root)]), max_size=MAX_SIZE):
            if isinstance(item, Fragment):
                yield item


def judge(roots: list[Path], scanner: Scanner) -> tuple[int, int, list[Finding]]:
    """(files, lines, findings) of every file under ``roots``."""
    files = lines = 0
    findings: list[Finding] = []
    batch: list[Fragment] = []
    for fragment in _fragments(roots):
        files += 1
        lines += fragment.text.count("\n") + (not fragment.text.endswith("\n"))
        batch.append(fragment)
        if len(batch) >= BATCH:
            findings += scanner.scan_batch(batch)
            batch = []
    findings += scanner.scan_batch(batch)
    return files, lines, findings


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", action="append", help="only these corpora (repeatable)")
    parser.add_argument("--show", action="store_true", help="list every finding")
    parser.add_argument("--plaintext", action="store_true", help="list findings unmasked")
    parser.add_argument("--mirror-root", type=Path, default=Path("/work/.mirror"))
    args = parser.parse_args(argv)
    scanner = Scanner(RuleSet(rules=builtin_rules()))
    with tempfile.TemporaryDirectory() as work:
        corpora = _installed_roots()
        for name in MIRRORS:
            if args.corpus is None or name in args.corpus:
                corpora[name] = _mirror_tree(name, args.mirror_root, Path(work))
        print(f"{'corpus':<14} {'files':>8} {'lines':>10} {'findings':>9} {'per million':>12}")
        for name, roots in corpora.items():
            if args.corpus is not None and name not in args.corpus:
                continue
            if not roots:
                print(f"{name:<14} (not on this machine)")
                continue
            files, lines, findings = judge(roots, scanner)
            rate = len(findings) / lines * 1e6 if lines else 0.0
            print(f"{name:<14} {files:>8} {lines:>10} {len(findings):>9} {rate:>12.1f}")
            by_rule = collections.Counter(finding.rule for finding in findings)
            print("    " + ", ".join(f"{rule} {count}" for rule, count in by_rule.most_common()))
            if args.show:
                for finding in findings:
                    shown = finding.match_text
                    if not args.plaintext:
                        shown = mask_match(shown, finding.secret_start, finding.secret_end)
                    print(f"    {finding.path}:{finding.line} {finding.rule} {shown[:160]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
