"""The four variants of the app's REST API: paths, scope, authentication, permissions.

Taken from the three API documents. Where a document does not say which
permission an operation needs, the message says so instead of guessing.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

from spillguard.core.errors import UsageError

if TYPE_CHECKING:
    from collections.abc import Mapping

VARIANT_NAMES = ("code-hosting", "wiki", "issue-tracker", "hosted")
_UNDOCUMENTED = "not documented by the API"
_APP_ADMIN = "server administrator, or explicit access on the app's settings page"


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class Variant:
    name: str
    #: Bearer API key (hosted) instead of HTTP basic (self-managed).
    bearer: bool
    #: Scope keys the paths need, e.g. ("project", "repo").
    scope: tuple[str, ...]
    rules: str
    #: Rule names that apply to the repository (code-hosting only).
    repository_rules: str | None = None
    #: The reviewed-findings export (CSV or zip), where the variant offers one.
    reviewed_export: str | None = None
    reviewed_permission: str = _UNDOCUMENTED
    #: Reviewed-line create/delete operations: this path plus /create or /delete.
    review: str | None = None
    review_permission: str = _UNDOCUMENTED
    #: Whether the create body always takes ruleName (else: detected per release line).
    review_rule_name: bool | None = True
    #: The generic-password rule settings (hosted only).
    rule_settings: str | None = None
    rules_permission: str = _UNDOCUMENTED
    #: The XSRF bypass header: self-managed servers refuse remote calls without it.
    xsrf: bool = True
    #: The server's own scan result of a branch (code-hosting only; ``sync --compare``).
    scan_result: str | None = None
    #: Wider reviewed-line exports (a project's, every one), read where the credentials
    #: allow: (what it is, path). Only their rows reviewed in the synced scope apply.
    wider_reviewed: tuple[tuple[str, str], ...] = ()


_SECURITY = "/rest/security/latest"
_TRACKER_ACCESS = "project administrator, or explicit app access plus view of the project"
_RULES_ACCESS = f"not documented for reading rules; managing them needs {_APP_ADMIN}"

VARIANTS: dict[str, Variant] = {
    "code-hosting": Variant(
        name="code-hosting",
        bearer=False,
        scope=("project", "repo"),
        rules="/rest/security/1.0/rules",
        repository_rules="/rest/security/1.0/scan/{project}/rule_types/{repo}",
        scan_result="/rest/security/1.0/scan/{project}/repos/{repo}",
        reviewed_export=f"{_SECURITY}/export/reviewed/projects/{{project}}/repos/{{repo}}",
        review=f"{_SECURITY}/review-lines/projects/{{project}}/repos/{{repo}}",
        review_rule_name=None,
        wider_reviewed=(
            ("project", f"{_SECURITY}/export/reviewed/projects/{{project}}"),
            ("global", f"{_SECURITY}/export/reviewed"),
        ),
    ),
    "wiki": Variant(
        name="wiki",
        bearer=False,
        scope=("space",),
        rules=f"{_SECURITY}/rules",
        rules_permission=_RULES_ACCESS,
        reviewed_export=f"{_SECURITY}/export/reviewed/space/{{space}}/findings",
        review=f"{_SECURITY}/review/space/{{space}}",
        wider_reviewed=(("global", f"{_SECURITY}/export/reviewed/findings"),),
        review_permission=(
            "permission to edit content in the space (older releases: space administrator)"
        ),
    ),
    "issue-tracker": Variant(
        name="issue-tracker",
        bearer=False,
        scope=("project",),
        rules=f"{_SECURITY}/rules",
        rules_permission=_RULES_ACCESS,
        reviewed_export=f"{_SECURITY}/export/reviewed/project/{{project}}/findings",
        reviewed_permission=_TRACKER_ACCESS,
        review=f"{_SECURITY}/review/project/{{project}}",
        review_permission=_TRACKER_ACCESS,
        wider_reviewed=(("global", f"{_SECURITY}/export/reviewed/findings"),),
    ),
    "hosted": Variant(
        name="hosted",
        bearer=True,
        scope=(),
        rules="/rest/rules",
        rule_settings="/rest/rules/generic-password-settings",
        rules_permission=(
            "the key acts as the app administrator who issued it; that user must still be an "
            "app administrator and the site on the advanced licence tier"
        ),
        xsrf=False,
    ),
}


def variant(name: str) -> Variant:
    try:
        return VARIANTS[name]
    except KeyError:
        raise UsageError(f"unknown variant {name!r}: one of {', '.join(VARIANT_NAMES)}") from None


def scope_values(chosen: Variant, settings: Mapping[str, object]) -> dict[str, str]:
    """The scope keys the variant's paths need, from the [sync] settings and flags."""
    missing = [key for key in chosen.scope if not settings.get(key)]
    if missing:
        flags = " and ".join(f"--{key}" for key in missing)
        raise UsageError(f"the {chosen.name} variant needs {flags} (or [sync] {missing[0]})")
    return {key: str(settings[key]) for key in chosen.scope}


def expand(template: str, scope: Mapping[str, str]) -> str:
    """A path template with every scope value percent-encoded as one path segment."""
    from urllib.parse import quote

    return template.format(**{key: quote(value, safe="~") for key, value in scope.items()})
