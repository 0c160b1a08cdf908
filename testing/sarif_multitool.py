"""GitHub's checks of an uploaded SARIF file, run by Microsoft's SARIF multitool.

GitHub code scanning rejects or degrades SARIF that the JSON schema accepts (a rule
without ``fullDescription``, a ``name`` equal to its ``id``); the multitool's
``validate --rule-kind "Gh;Sarif"`` applies those rules. It is a .NET program that
npm ships ready to run (``@microsoft/sarif-multitool``, with one package per
platform holding the binary), installed by ``.ci/run`` with ``npm install --global``.
Its npm wrapper passes arguments through a shell, which splits ``Gh;Sarif`` at the
semicolon, so the binary is run directly.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

INSTALL = "npm install --global @microsoft/sarif-multitool"


def multitool() -> Path | None:
    """The multitool's binary: ``$SARIF_MULTITOOL``, else the one npm installed
    globally, as the package itself finds it (its platform's package, wherever npm
    put that)."""
    given = os.environ.get("SARIF_MULTITOOL")
    if given:
        return Path(given)
    npm, node = shutil.which("npm"), shutil.which("node")
    if npm is None or node is None:
        return None
    root = subprocess.run([npm, "root", "--global"], capture_output=True, text=True, check=False)
    package = Path(root.stdout.strip(), "@microsoft", "sarif-multitool")
    found = subprocess.run(
        [node, "-p", "require(process.argv[1])", str(package)],
        capture_output=True,
        text=True,
        check=False,
    )
    binary = Path(found.stdout.strip())
    return binary if found.returncode == 0 and binary.is_file() else None


def github_problems(files: list[Path], log: Path) -> list[str]:
    """What ``validate --rule-kind "Gh;Sarif"`` reports at the levels it fails on
    (error and warning), one line each: ``RULE file: where``."""
    binary = multitool()
    if binary is None:
        message = f"the SARIF multitool is not installed: {INSTALL} (.ci/run does)"
        raise FileNotFoundError(message)
    command = [str(binary), "validate", "--rule-kind", "Gh;Sarif", "--output", str(log)]
    done = subprocess.run(
        [*command, *map(str, files)],
        capture_output=True,
        text=True,
        check=False,
        # A .NET program without ICU on the machine runs with invariant culture.
        env={**os.environ, "DOTNET_SYSTEM_GLOBALIZATION_INVARIANT": "1"},
    )
    if not log.is_file():
        raise RuntimeError(f"the SARIF multitool failed: {done.stdout}{done.stderr}")
    problems = []
    for result in json.loads(log.read_text(encoding="utf-8"))["runs"][0].get("results", []):
        if result.get("level", "warning") in {"error", "warning"}:  # SARIF's default: warning
            where = result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
            arguments = result.get("message", {}).get("arguments", [])
            problems.append(f"{result['ruleId']} {Path(where).name}: {' '.join(arguments[:1])}")
    return problems
