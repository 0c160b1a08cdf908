"""The client against what the API documents allow a server to do, not only what ours does.

The fake server is strict where the documents are (methods, paths, JSON bodies, the
create body's fields, Accept honoured) and varies where they are silent or where any
HTTP server may: paged envelopes, framing, byte order marks, unmarked rule records,
export layouts.
"""

from __future__ import annotations

import json
import os
from typing import TYPE_CHECKING

import pytest

from spillguard.cli import main
from spillguard.configuration.sync_cache import cache_path
from spillguard.detection.fingerprint import reviewed_digest
from spillguard.sync import fetch
from testing.fake_server import Answer, FakeApp, zip_of
from testing.tokens import expand

if TYPE_CHECKING:
    from testing.gitrepo import GitRepo

PASSWORD = expand("pw-{rand:Aa0:24}", "conformance-password")
API_KEY = expand("key-{rand:Aa0:40}", "conformance-api-key")
TOKEN = expand("itk_{rand:Aa0:32}", "conformance-token")
CUSTOM = {"id": "7", "name": "Internal token", "regexp": "itk_[A-Za-z0-9]{32}", "hardcoded": False}
RULES_PATH = "/rest/security/1.0/rules"
EXPORT_PATH = "/rest/security/latest/export/reviewed/projects/PRJ/repos/app"
SCOPES = {
    "code-hosting": ("--project", "PRJ", "--repo", "app"),
    "wiki": ("--space", "DOCS"),
    "issue-tracker": ("--project", "OPS"),
    "hosted": (),
}


@pytest.fixture
def app() -> FakeApp:
    return FakeApp(password=PASSWORD, api_key=API_KEY, rules=[{**CUSTOM, "enabled": True}])


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    assert PASSWORD not in out + err
    assert TOKEN not in out + err
    return code, out, err


def sync(capsys: pytest.CaptureFixture[str], url: str, variant: str = "code-hosting") -> str:
    code, out, err = run(capsys, "sync", "--server", url, "--variant", variant, *SCOPES[variant])
    assert code == 0, err
    return out


def cache(work: GitRepo) -> dict:
    return json.loads(cache_path(work.path, os.environ).read_text())


def reviewed(data: dict) -> list[tuple[str, str | None]]:
    """The cache's reviewed entries as (digest, rule), sorted."""
    return sorted(((entry["digest"], entry["rule"]) for entry in data["reviewed"]), key=str)


def digests(data: dict, *entries: tuple[str, str | None]) -> list[tuple[str, str | None]]:
    return sorted(((reviewed_digest(text, data["salt"]), rule) for text, rule in entries), key=str)


EXPECTED = {
    "code-hosting": [
        ("GET", RULES_PATH),
        ("GET", "/rest/security/1.0/scan/PRJ/rule_types/app"),
        ("GET", EXPORT_PATH),
        ("GET", "/rest/security/latest/export/reviewed/projects/PRJ"),
        ("GET", "/rest/security/latest/export/reviewed"),
        ("POST", "/rest/security/latest/review-lines/projects/PRJ/repos/app/create"),
        ("POST", "/rest/security/latest/review-lines/projects/PRJ/repos/app/delete"),
    ],
    "wiki": [
        ("GET", "/rest/security/latest/rules"),
        ("GET", "/rest/security/latest/export/reviewed/space/DOCS/findings"),
        ("GET", "/rest/security/latest/export/reviewed/findings"),
        ("POST", "/rest/security/latest/review/space/DOCS/create"),
        ("POST", "/rest/security/latest/review/space/DOCS/delete"),
    ],
    "issue-tracker": [
        ("GET", "/rest/security/latest/rules"),
        ("GET", "/rest/security/latest/export/reviewed/project/OPS/findings"),
        ("GET", "/rest/security/latest/export/reviewed/findings"),
        ("POST", "/rest/security/latest/review/project/OPS/create"),
        ("POST", "/rest/security/latest/review/project/OPS/delete"),
    ],
    "hosted": [("GET", "/rest/rules"), ("GET", "/rest/rules/generic-password-settings")],
}


@pytest.mark.parametrize("variant", list(EXPECTED))
def test_every_request_is_the_documented_one(work, app, url, capsys, monkeypatch, variant) -> None:
    app.variant = variant
    monkeypatch.setenv("SPILLGUARD_API_KEY", API_KEY)
    sync(capsys, url, variant)
    if variant != "hosted":
        for action in ("add", "remove"):
            code, _, err = run(
                capsys, "review", action, "--remote", "--rule", "INTERNAL_TOKEN", TOKEN
            )
            assert code == 0, err
    assert [(method, path) for method, path, _ in app.requests] == EXPECTED[variant]
    for method, _, headers in app.requests:
        if variant == "hosted":
            assert headers["Authorization"] == f"Bearer {API_KEY}"
            assert "X-Host-Token" not in headers
        else:
            assert headers["Authorization"].startswith("Basic ")
            assert headers["X-Host-Token"] == "no-check"
        assert ("Content-Type" in headers) == (method == "POST")
    if variant in ("wiki", "issue-tracker"):
        assert app.posted == [
            ("create", {"matchText": TOKEN, "ruleName": "Internal token"}),
            ("delete", {"matchText": TOKEN}),
        ]


@pytest.mark.parametrize("framing", ["chunked", "close", "keep-alive"])
def test_answers_delimited_by_chunks_by_closing_or_kept_alive(
    work, app, url, capsys, framing
) -> None:
    app.framing = framing
    app.reviewed = [(TOKEN, "Internal token")]
    sync(capsys, url)
    data = cache(work)
    assert [rule["name"] for rule in data["rules"]] == ["INTERNAL_TOKEN"]
    assert reviewed(data) == digests(data, (TOKEN, "INTERNAL_TOKEN"))


@pytest.mark.parametrize(("variant", "paging"), [("code-hosting", "start"), ("wiki", "page")])
def test_a_paged_list_is_read_to_its_last_page(work, app, url, capsys, variant, paging) -> None:
    app.variant, app.paging = variant, paging
    app.rules = [
        {"id": "1", "name": "AWS_CLIENT_ID", "hardcoded": True, "enabled": False},
        {"id": "2", "name": "GENERIC_PASSWORD", "hardcoded": True, "enabled": True},
        {**CUSTOM, "enabled": True},
    ]
    app.repository_rules = ["AWS_CLIENT_ID", "GENERIC_PASSWORD", "Internal token"]
    sync(capsys, url, variant)
    data = cache(work)
    assert [rule["name"] for rule in data["rules"]] == [
        "AWS_CLIENT_ID",
        "GENERIC_PASSWORD",
        "INTERNAL_TOKEN",
    ]
    if variant == "code-hosting":
        assert data["repository_rules"] == ["AWS_CLIENT_ID", "GENERIC_PASSWORD", "INTERNAL_TOKEN"]


def test_a_list_that_never_ends_fails_the_sync(work, app, url, capsys, monkeypatch) -> None:
    monkeypatch.setattr(fetch, "MAX_PAGES", 3)
    endless = json.dumps({"values": [], "isLastPage": False, "nextPageStart": 0}).encode()
    app.then(RULES_PATH, *[Answer(200, endless, {"Content-Type": "application/json"})] * 3)
    code, _, err = run(capsys, "sync", "--server", url, *SCOPES["code-hosting"])
    assert code == 3
    assert (
        err == f"spillguard: error: GET {RULES_PATH}: the rule list answer has more than 3 pages\n"
    )


@pytest.mark.parametrize("variant", ["wiki", "issue-tracker", "hosted"])
def test_rule_records_that_do_not_say_built_in(
    work, app, url, capsys, monkeypatch, variant
) -> None:
    """Those variants do not show their rule records: numeric or UUID ids, a built-in rule
    listed with its own pattern, ``regex`` for the expression, nulls, extra fields."""
    app.variant = variant
    monkeypatch.setenv("SPILLGUARD_API_KEY", API_KEY)
    app.rules = [
        {"enabled": False, "regexp": "AKIA[0-9A-Z]{16}", "name": "AWS_CLIENT_ID", "id": 1},
        {"id": 2, "name": "GENERIC_PASSWORD", "enabled": True, "regexp": None, "description": None},
        {"regex": "itk_[A-Za-z0-9]{32}", "name": "Internal token", "enabled": True, "id": 12},
        {"type": "CUSTOM", "name": "Team token", "pattern": "tt_[a-z0-9]{24}", "enabled": None},
    ]
    sync(capsys, url, variant)
    assert [(rule["name"], rule["kind"], rule["enabled"]) for rule in cache(work)["rules"]] == [
        ("AWS_CLIENT_ID", "builtin", False),
        ("GENERIC_PASSWORD", "builtin", True),
        ("INTERNAL_TOKEN", "custom", True),
        ("TEAM_TOKEN", "custom", True),
    ]


def test_json_with_a_byte_order_mark(work, app, url, capsys) -> None:
    body = b"\xef\xbb\xbf" + json.dumps([{**CUSTOM, "enabled": True}]).encode()
    app.then(RULES_PATH, Answer(200, body, {"Content-Type": "application/json; charset=utf-8"}))
    sync(capsys, url)
    assert [rule["name"] for rule in cache(work)["rules"]] == ["INTERNAL_TOKEN"]


ODD = 'a "quoted", multi\r\nline value'
EXPORTS = {
    "bom, spaced headers, quoting": (
        "\ufeffRule Name,Reviewed By,Match Text\r\n"
        f'Internal token,ada,{TOKEN}\r\nGENERIC_PASSWORD,bob,"{ODD.replace(chr(34), 2 * chr(34))}"\r\n'
    ).encode(),
    "a zip of csv files": zip_of(
        {
            "PRJ/app.csv": f"matchText,ruleName\n{TOKEN},Internal token\n".encode(),
            "PRJ/app-2.csv": (
                f'"MATCHTEXT","RULENAME"\n"{ODD.replace(chr(34), 2 * chr(34))}","GENERIC_PASSWORD"\n'
            ).encode(),
        }
    ),
}


@pytest.mark.parametrize("body", list(EXPORTS.values()), ids=list(EXPORTS))
@pytest.mark.parametrize("content_type", ["text/csv; charset=UTF-8", "application/octet-stream"])
def test_export_layouts(work, app, url, capsys, body, content_type) -> None:
    headers = {"Content-Type": content_type, "Content-Disposition": 'attachment; filename="r.csv"'}
    app.then(EXPORT_PATH, Answer(200, body, headers))
    out = sync(capsys, url)
    data = cache(work)
    assert reviewed(data) == digests(data, (TOKEN, "INTERNAL_TOKEN"), (ODD, "GENERIC_PASSWORD"))
    assert "reviewed lines: 2 (ruleName: yes)" in out


def test_an_export_of_another_media_type_is_still_read(work, app, url, capsys) -> None:
    body = f"matchText\n{TOKEN}\n".encode()
    app.then(EXPORT_PATH, Answer(200, body, {"Content-Type": "application/vnd.ms-excel"}))
    out = sync(capsys, url)
    data = cache(work)
    assert reviewed(data) == digests(data, (TOKEN, None))
    assert "reviewed lines: 1 (ruleName: no)" in out


def test_an_empty_export_leaves_the_rule_name_unknown(work, app, url, capsys) -> None:
    app.then(EXPORT_PATH, Answer(200, b"", {"Content-Type": "text/csv"}))
    out = sync(capsys, url)
    assert cache(work)["release_line"]["review_rule_name"] is None
    assert "reviewed lines: 0 (ruleName: unknown)" in out
    code, _, err = run(capsys, "review", "add", "--remote", "--rule", "INTERNAL_TOKEN", TOKEN)
    assert code == 0, err
    assert app.posted == [("create", {"matchText": TOKEN, "ruleName": "Internal token"})]


def test_the_servers_spelling_of_a_built_in_rule_is_sent_back(work, app, url, capsys) -> None:
    app.variant = "wiki"
    app.rules = [{"id": 1, "name": "Generic password", "hardcoded": True, "enabled": True}]
    sync(capsys, url, "wiki")
    assert cache(work)["rules"][0]["name"] == "GENERIC_PASSWORD"
    code, _, err = run(capsys, "review", "add", "--remote", "--rule", "GENERIC_PASSWORD", TOKEN)
    assert code == 0, err
    assert app.posted == [("create", {"matchText": TOKEN, "ruleName": "Generic password"})]


def test_two_server_rules_with_one_local_name(work, app, url, capsys) -> None:
    app.rules = [{**CUSTOM, "enabled": True}, {**CUSTOM, "name": "internal-token", "id": "8"}]
    code, _, err = run(capsys, "sync", "--server", url, *SCOPES["code-hosting"])
    assert code == 0, err
    assert [rule["server_name"] for rule in cache(work)["rules"]] == ["Internal token"]
    assert "server rule 'internal-token' is a second INTERNAL_TOKEN; not used" in err


def test_a_personal_repository(work, app, url, capsys) -> None:
    code, _, err = run(capsys, "sync", "--server", url, "--project", "~ada", "--repo", "app")
    assert code == 0, err
    assert [path for _, path, _ in app.requests][1:] == [
        "/rest/security/1.0/scan/~ada/rule_types/app",
        "/rest/security/latest/export/reviewed/projects/~ada/repos/app",
        "/rest/security/latest/export/reviewed/projects/~ada",
        "/rest/security/latest/export/reviewed",
    ]


def test_a_paged_envelope_without_next_page_start(work, app, url, capsys) -> None:
    pages = [
        {"values": [{**CUSTOM, "enabled": True}], "start": 0, "size": 1, "isLastPage": False},
        {"values": [{"name": "AWS_CLIENT_ID", "hardcoded": True}], "start": 1, "isLastPage": True},
    ]
    app.then(RULES_PATH, *[Answer(200, json.dumps(page).encode()) for page in pages])
    sync(capsys, url)
    assert [rule["name"] for rule in cache(work)["rules"]] == ["INTERNAL_TOKEN", "AWS_CLIENT_ID"]
    assert app.requests[1][1] == f"{RULES_PATH}?start=1"


LATIN = "clé_secrète_1234567890"


@pytest.mark.parametrize(
    ("body", "content_type"),
    [
        (
            f"matchText,ruleName\r\n{LATIN},GENERIC_PASSWORD\r\n".encode("latin-1"),
            "text/csv; charset=ISO-8859-1",
        ),
        (f"matchText,ruleName\r\n{LATIN},GENERIC_PASSWORD\r\n".encode("utf-16"), "text/csv"),
    ],
    ids=["declared charset", "utf-16 with a byte order mark"],
)
def test_an_export_in_another_encoding(work, app, url, capsys, body, content_type) -> None:
    app.then(EXPORT_PATH, Answer(200, body, {"Content-Type": content_type}))
    sync(capsys, url)
    data = cache(work)
    assert reviewed(data) == digests(data, (LATIN, "GENERIC_PASSWORD"))


@pytest.mark.parametrize("action", ["create", "delete"])
def test_a_review_answer_that_is_not_json(work, app, url, capsys, action) -> None:
    """The documents show no answer body for reviewed-line operations."""
    synced_path = f"/rest/security/latest/review-lines/projects/PRJ/repos/app/{action}"
    sync(capsys, url)
    app.then(synced_path, Answer(201, b"Created", {"Content-Type": "text/plain"}))
    verb = "add" if action == "create" else "remove"
    code, _, err = run(capsys, "review", verb, "--remote", "--rule", "INTERNAL_TOKEN", TOKEN)
    assert code == 0, err


def test_a_rule_list_grouped_by_kind(work, app, url, capsys) -> None:
    """The wiki document says only that the list holds built-in and custom rules."""
    app.variant = "wiki"
    grouped = {
        "builtInRules": [{"name": "AWS_CLIENT_ID", "enabled": False, "regexp": "AKIA[0-9A-Z]{16}"}],
        "customRules": [{"id": 12, "name": "AWS_CLIENT_ID_2", "regexp": CUSTOM["regexp"]}],
    }
    app.then("/rest/security/latest/rules", Answer(200, json.dumps(grouped).encode()))
    sync(capsys, url, "wiki")
    assert [(rule["name"], rule["kind"], rule["enabled"]) for rule in cache(work)["rules"]] == [
        ("AWS_CLIENT_ID", "builtin", False),
        ("AWS_CLIENT_ID_2", "custom", True),
    ]


def test_a_last_field_reading_export_cancelled_is_data(work, app, url, capsys) -> None:
    body = f"matchText,ruleName,comment\r\n{TOKEN},Internal token,Export cancelled\r\n".encode()
    app.then(EXPORT_PATH, Answer(200, body, {"Content-Type": "text/csv"}))
    sync(capsys, url)
    data = cache(work)
    assert reviewed(data) == digests(data, (TOKEN, "INTERNAL_TOKEN"))


def test_json_in_a_declared_charset(work, app, url, capsys) -> None:
    body = json.dumps([{**CUSTOM, "name": "Clé interne"}], ensure_ascii=False).encode("latin-1")
    app.then(RULES_PATH, Answer(200, body, {"Content-Type": "application/json;charset=ISO-8859-1"}))
    sync(capsys, url)
    assert [rule["server_name"] for rule in cache(work)["rules"]] == ["Clé interne"]


def test_a_reviewed_line_naming_its_rule_by_id(work, app, url, capsys) -> None:
    """The wiki and issue tracker identify custom rules by a numeric id."""
    app.variant = "issue-tracker"
    app.rules = [{"id": 12, "name": "Internal token", "regexp": CUSTOM["regexp"]}]
    body = f"matchText,ruleName\n{TOKEN},12\n".encode()
    app.then("/rest/security/latest/export/reviewed/project/OPS/findings", Answer(200, body))
    sync(capsys, url, "issue-tracker")
    data = cache(work)
    assert reviewed(data) == digests(data, (TOKEN, "INTERNAL_TOKEN"))


def test_rule_types_as_records(work, app, url, capsys) -> None:
    records = json.dumps([{"name": "Internal token"}, "AWS_CLIENT_ID"]).encode()
    app.then("/rest/security/1.0/scan/PRJ/rule_types/app", Answer(200, records))
    sync(capsys, url)
    assert cache(work)["repository_rules"] == ["INTERNAL_TOKEN", "AWS_CLIENT_ID"]
