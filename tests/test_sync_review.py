"""``spillguard review add|remove --remote`` against the real fake server."""

from __future__ import annotations

import json
import os
from typing import TYPE_CHECKING

import pytest

from spillguard.cli import main
from spillguard.configuration.sync_cache import cache_path
from testing.fake_server import Answer, FakeApp
from testing.tokens import expand

if TYPE_CHECKING:
    from testing.gitrepo import GitRepo

PASSWORD = expand("pw-{rand:Aa0:24}", "review-password")
TOKEN = expand("itk_{rand:Aa0:32}", "review-token")
CUSTOM = {
    "id": "7",
    "name": "Internal token",
    "regexp": "itk_[A-Za-z0-9]{32}",
    "hardcoded": False,
    "enabled": True,
    "blocking": True,
}


@pytest.fixture
def app() -> FakeApp:
    return FakeApp(password=PASSWORD, rules=[dict(CUSTOM)])


def synced(url: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["sync", "--server", url, "--project", "PRJ", "--repo", "app"]) == 0
    capsys.readouterr()


def review(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    code = main(["review", *argv])
    out, err = capsys.readouterr()
    assert TOKEN not in out + err
    assert PASSWORD not in out + err
    return code, out + err


def own_config(work: GitRepo, text: str) -> tuple[str, str]:
    """The user's own file (a repository file may not name the server)."""
    path = work.path.parent / "own.toml"
    path.write_text(text)
    return ("--config", str(path))


def scan_finds_token(work: GitRepo, capsys: pytest.CaptureFixture[str]) -> bool:
    work.write("app.cfg", f"internal = {TOKEN}\n")
    code = main(["scan", "--files", "app.cfg"])
    capsys.readouterr()
    return code == 1


def test_add_sends_the_servers_rule_name_and_updates_the_cache(work, app, url, capsys) -> None:
    synced(url, capsys)
    assert scan_finds_token(work, capsys)
    code, said = review(capsys, "add", "--remote", "--rule", "INTERNAL_TOKEN", TOKEN)
    assert code == 0, said
    assert app.posted == [("create", {"matchText": TOKEN, "ruleName": "Internal token"})]
    assert "marked as reviewed" in said
    assert not scan_finds_token(work, capsys)
    assert app.reviewed == [(TOKEN, "Internal token")]

    code, said = review(capsys, "remove", "--remote", TOKEN)
    assert code == 0, said
    assert app.posted[-1] == ("delete", {"matchText": TOKEN})
    assert app.reviewed == []
    assert scan_finds_token(work, capsys)
    assert TOKEN not in cache_path(work.path, os.environ).read_text()


def test_an_older_release_line_gets_no_rule_name(work, app, url, capsys) -> None:
    app.release = "older"
    synced(url, capsys)
    assert (
        json.loads(cache_path(work.path, os.environ).read_text())["release_line"][
            "review_rule_name"
        ]
        is False
    )
    code, said = review(capsys, "add", "--remote", "--rule", "INTERNAL_TOKEN", TOKEN)
    assert code == 0, said
    assert app.posted == [("create", {"matchText": TOKEN})]


def test_without_a_sync_a_refused_rule_name_is_retried_without(work, app, url, capsys) -> None:
    app.release = "older"
    own = own_config(work, f'[sync]\nserver = "{url}"\nproject = "PRJ"\nrepo = "app"\n')
    code, said = review(capsys, "add", "--remote", "--rule", "INTERNAL_TOKEN", TOKEN, *own)
    assert code == 0, said
    assert app.posted == [
        ("create", {"matchText": TOKEN, "ruleName": "Internal token"}),
        ("create", {"matchText": TOKEN}),
    ]
    assert "run spillguard sync" in said


def test_the_wiki_variant_needs_a_rule_and_says_which_permission(work, app, url, capsys) -> None:
    app.variant = "wiki"
    own = own_config(work, f'[sync]\nserver = "{url}"\nvariant = "wiki"\nspace = "DOCS"\n')
    code, said = review(capsys, "add", "--remote", TOKEN, *own)
    assert (code, "the wiki variant's reviewed lines need --rule NAME" in said) == (2, True)
    app.then("/rest/security/latest/review/space/DOCS/create", Answer.error(403, "Forbidden"))
    code, said = review(capsys, "add", "--remote", "--rule", "INTERNAL_TOKEN", TOKEN, *own)
    assert code == 3
    assert "missing permission: permission to edit content in the space" in said


def test_the_hosted_variant_offers_no_remote_review(work, capsys, monkeypatch) -> None:
    monkeypatch.setenv("SPILLGUARD_API_KEY", "unused")
    own = own_config(work, '[sync]\nserver = "https://app.example.net"\nvariant = "hosted"\n')
    code, said = review(capsys, "add", "--remote", "--rule", "X", TOKEN, *own)
    assert (code, "the hosted API documents no reviewed-line operations" in said) == (2, True)


@pytest.mark.parametrize("variant", ["wiki", "issue-tracker"])
def test_without_a_sync_the_rule_is_sent_as_the_server_spells_it(
    work, app, url, capsys, variant
) -> None:
    app.variant, app.check_rule_names = variant, True
    scope = 'space = "DOCS"' if variant == "wiki" else 'project = "OPS"'
    own = own_config(work, f'[sync]\nserver = "{url}"\nvariant = "{variant}"\n{scope}\n')
    code, said = review(capsys, "add", "--remote", "--rule", "INTERNAL_TOKEN", TOKEN, *own)
    assert code == 0, said
    assert app.posted == [("create", {"matchText": TOKEN, "ruleName": "Internal token"})]
    assert app.requests[0][:2] == ("GET", "/rest/security/latest/rules")
