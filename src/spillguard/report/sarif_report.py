"""``--format sarif``: SARIF 2.1.0 for code-scanning services.

One run; the rules that produced a finding or an error are its reportingDescriptors.
A blocking finding is an ``error``, a warn-only one a ``warning``; an allowlisted
one is kept with a suppression. Columns are 1-based UTF-16 code units (SARIF's
default ``columnKind``, and how the server's Java counts offsets) and left out when
a long line was cut to its match. The commit goes in each result's properties: the
repository URL that versionControlProvenance requires is not something a scan of a
local repository knows.

GitHub's code scanning checks what it uploads beyond the schema (sarif-multitool
``validate --rule-kind "Gh;Sarif"``): each rule has a ``fullDescription``, and a
``name`` that is not its ``id``. The tool's ``informationUri`` is where spillguard
was installed from, as pip recorded it: the repository's page for ``pip install
git+https://...`` (as the CI recipes install it), the rules' reference in the
checkout for ``pip install .``. spillguard has no address of its own, and a package
index page that does not exist is one anyone could register; with neither known the
field is left out.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from spillguard.core.outcome import is_blocking
from spillguard.report.findings import shown_match, shown_text, utf16_offsets
from spillguard.report.sanitize import json_safe

if TYPE_CHECKING:
    from typing import TextIO

    from spillguard.core.models import Finding, Rule, ScanResult
    from spillguard.report import ReportOptions

SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
#: The partialFingerprints key: the finding's location hashed (rule, path, commit, line,
#: column), never its secret; v1 hashed the secret and is not produced any more.
FINGERPRINT_KEY = "spillguardFingerprint/v2"
HELP = (
    "A secret in a commit stays in the repository's history: revoke or rotate it, then "
    "remove it. If the match is not a secret, add `pragma: allowlist-secret` in a comment "
    "on the line, or run `spillguard review add`."
)


def _descriptor(name: str, rule: Rule | None) -> dict[str, Any]:
    blocking = rule.blocking if rule is not None else True
    text = (rule.description if rule is not None else "") or f"Secret matched by {name}"
    kind = {"builtin": "built-in"}.get(rule.kind, rule.kind) if rule is not None else "custom"
    verdict = "blocks a commit or push" if blocking else "only warns"
    full = f"{text.rstrip('.')}. Found by spillguard's {kind} rule {name}, which {verdict}."
    descriptor: dict[str, Any] = {"id": name}
    readable = display_name(name)
    if readable != name:  # SARIF: a name equal to the id is left out
        descriptor["name"] = readable
    return {
        **descriptor,
        "shortDescription": {"text": text},
        "fullDescription": {"text": full},
        "defaultConfiguration": {"level": "error" if blocking else "warning"},
        "help": {"text": HELP},
        "properties": {
            "tags": ["security", "secret"],
            # code-scanning dashboards sort security results by this (high / medium)
            "security-severity": "8.0" if blocking else "5.0",
            "kind": rule.kind if rule is not None else "custom",
            "source": rule.source if rule is not None else "unknown",
        },
    }


def install_origin() -> str | None:
    """Where pip installed spillguard from (PEP 610's ``direct_url.json``), if it knows."""
    import importlib.metadata

    try:
        recorded = importlib.metadata.distribution("spillguard").read_text("direct_url.json")
        url = json.loads(recorded or "{}").get("url")
    except (importlib.metadata.PackageNotFoundError, ValueError, AttributeError):
        return None
    return url if isinstance(url, str) else None


def information_uri(origin: str | None) -> str | None:
    """A page about spillguard at ``origin``: the repository's, for a web address; the
    rules' reference, for a checkout on this machine that has it."""
    from urllib.parse import urlsplit

    if origin is None:
        return None
    parts = urlsplit(origin)
    if parts.scheme == "file":
        from pathlib import Path
        from urllib.request import url2pathname

        reference = Path(url2pathname(parts.path), "docs", "configuration.md")
        return reference.as_uri() + "#rules" if reference.is_file() else None
    if parts.scheme not in {"https", "http"} or not parts.hostname:
        return None
    # Never the credentials a URL may carry (https://user:token@host/...).
    host = parts.hostname if parts.port is None else f"{parts.hostname}:{parts.port}"
    return f"{parts.scheme}://{host}{parts.path.removesuffix('.git')}"


def display_name(rule: str) -> str:
    """The rule's name for readers, in PascalCase: ``AWS_CLIENT_ID`` is ``AwsClientId``."""
    return "".join(part[:1].upper() + part[1:].lower() for part in rule.split("_") if part)


def _uri(path: str) -> str:
    # A file name that is not UTF-8 is percent-encoded as the bytes it is made of.
    encoded = quote(path.encode("utf-8", "surrogateescape"))
    if path.startswith("/"):
        return "file://" + encoded
    return encoded


def _region(finding: Finding, options: ReportOptions) -> dict[str, Any]:
    region: dict[str, Any] = {
        "startLine": finding.line,
        "snippet": {"text": shown_text(finding, plaintext=options.plaintext)},
    }
    if not finding.truncated:
        start, end = utf16_offsets(finding)
        region["startColumn"] = start + 1
        region["endColumn"] = end + 1
    return region


def _result(finding: Finding, index: int, options: ReportOptions) -> dict[str, Any]:
    match = shown_match(finding, plaintext=options.plaintext)
    blocking = is_blocking(finding)
    result: dict[str, Any] = {
        "ruleId": finding.rule,
        "ruleIndex": index,
        "level": "error" if blocking else "warning",
        "message": {"text": f"{finding.rule}: {match}"},
        "locations": [
            {
                "physicalLocation": {
                    "artifactLocation": {"uri": _uri(finding.path)},
                    "region": _region(finding, options),
                }
            }
        ],
        "partialFingerprints": {FINGERPRINT_KEY: finding.fingerprint},
        "properties": _properties(finding, blocking),
    }
    if finding.allowlisted:
        result["suppressions"] = [{"kind": "inSource", "justification": "allowlisted"}]
    elif finding.reviewed:
        result["suppressions"] = [{"kind": "external", "justification": "reviewed"}]
    return result


def _properties(finding: Finding, blocking: bool) -> dict[str, Any]:
    properties: dict[str, Any] = {"blocking": blocking, "truncated": finding.truncated}
    if finding.commit is not None:
        properties.update(
            commit=finding.commit.id, author=finding.commit.author, date=finding.commit.date
        )
    if finding.ref is not None:
        properties["ref"] = finding.ref
    return properties


def sarif_document(result: ScanResult, options: ReportOptions) -> dict[str, Any]:
    known = {rule.name: rule for rule in options.rules}
    names = list(dict.fromkeys([f.rule for f in result.findings] + [e.rule for e in result.errors]))
    index = {name: position for position, name in enumerate(names)}
    notifications = [
        {
            "level": "error",
            "message": {"text": error.message},
            "associatedRule": {"id": error.rule, "index": index[error.rule]},
        }
        for error in result.errors
    ]
    from spillguard import __version__

    driver: dict[str, Any] = {"name": "spillguard", "version": __version__}
    page = information_uri(install_origin())
    if page is not None:
        driver["informationUri"] = page
    driver["rules"] = [_descriptor(name, known.get(name)) for name in names]
    run = {
        "tool": {"driver": driver},
        "invocations": [
            {
                "executionSuccessful": not result.errors
                and not any(skip.failed for skip in result.skipped),
                "toolExecutionNotifications": notifications,
            }
        ],
        "columnKind": "utf16CodeUnits",
        "results": [_result(f, index[f.rule], options) for f in result.findings],
    }
    return {"$schema": SCHEMA, "version": "2.1.0", "runs": [run]}


def write(result: ScanResult, stream: TextIO, options: ReportOptions) -> None:
    document = sarif_document(result, options)
    stream.write(json_safe(json.dumps(document, indent=2, ensure_ascii=False)) + "\n")
