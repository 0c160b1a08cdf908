"""A real ``java.util.regex`` to judge spillguard's translation of Java patterns.

The oracle (``testing/java/RegexOracle.java``) is compiled once into a temporary
directory and started once; every pattern and its inputs travel in one batch over
its standard input, so the JVM's start-up is paid once for the whole corpus.
"""

from __future__ import annotations

import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

SOURCE = Path(__file__).parent / "java" / "RegexOracle.java"
#: What to install where Java is missing (Debian's JDK; .ci/run installs it).
INSTALL = "apt-get install -y openjdk-17-jdk-headless"


@dataclass(frozen=True, slots=True)
class Verdict:
    """What Java did with one pattern: refused it, or the spans of every
    ``Matcher.find()`` per input (UTF-16 offsets; None where the match ran too long)."""

    compiles: bool
    spans: tuple[tuple[tuple[int, int], ...] | None, ...] = ()


def missing() -> str | None:
    """Why the oracle cannot run here, or None when java and javac are installed."""
    if shutil.which("java") and shutil.which("javac"):
        return None
    return f"Java is not installed: {INSTALL} (.ci/run does)"


def _hex(text: str) -> str:
    return text.encode("utf-16-be", "surrogatepass").hex()


def _spans(field: str) -> tuple[tuple[int, int], ...] | None:
    if field == "T":
        return None
    if not field:
        return ()
    pairs = (span.split("-") for span in field.split(","))
    return tuple((int(start), int(end)) for start, end in pairs)


def judge(requests: list[tuple[str, list[str]]], workdir: Path) -> list[Verdict]:
    """Java's verdict on each (pattern, inputs) request, in one JVM."""
    classes = workdir / "classes"
    classes.mkdir(parents=True, exist_ok=True)
    subprocess.run(
        ["javac", "-encoding", "UTF-8", "-d", str(classes), str(SOURCE)],
        check=True,
        capture_output=True,
    )
    lines = "".join(
        "\t".join([_hex(pattern), *map(_hex, inputs)]) + "\n" for pattern, inputs in requests
    )
    done = subprocess.run(
        [
            "java",
            "-Xss16m",
            "-XX:+UseSerialGC",
            "-XX:TieredStopAtLevel=1",
            "-cp",
            str(classes),
            "RegexOracle",
        ],
        input=lines,
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise RuntimeError(f"the oracle failed: {done.stderr[-2000:]}")
    answers = done.stdout.splitlines()
    if len(answers) != len(requests):
        raise RuntimeError(f"the oracle answered {len(answers)} of {len(requests)}: {done.stderr}")
    verdicts = []
    for answer in answers:
        fields = answer.split("\t")
        if fields[0] == "E":
            verdicts.append(Verdict(compiles=False))
        else:
            verdicts.append(Verdict(compiles=True, spans=tuple(map(_spans, fields[1:]))))
    return verdicts
