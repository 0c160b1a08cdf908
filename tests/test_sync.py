"""``spillguard sync`` against a real HTTP server on 127.0.0.1 speaking each variant."""

from __future__ import annotations

import json
import os
from typing import TYPE_CHECKING

import pytest

from spillguard.cli import main
from spillguard.configuration.sync_cache import cache_path
from testing.fake_server import Answer, FakeApp, serve, zip_of
from testing.tokens import expand

if TYPE_CHECKING:
    from testing.gitrepo import GitRepo

PASSWORD = expand("pw-{rand:Aa0:24}", "sync-password")
API_KEY = expand("key-{rand:Aa0:40}", "sync-api-key")
REVIEWED = expand("itk_{rand:Aa0:32}", "sync-reviewed")
CUSTOM = {"id": "7", "name": "Internal token", "regexp": "itk_[A-Za-z0-9]{32}", "hardcoded": False}
RULES = [
    {"id": "1", "name": "AWS_CLIENT_ID", "hardcoded": True, "enabled": True},
    {"id": "2", "name": "GENERIC_PASSWORD", "hardcoded": True, "enabled": False},
    {**CUSTOM, "enabled": True, "blocking": False},
]
CODE_HOSTING = ("--server", "{url}", "--project", "PRJ", "--repo", "app")
EXPORT_PATH = "/rest/security/latest/export/reviewed/projects/PRJ/repos/app"


@pytest.fixture
def app() -> FakeApp:
    return FakeApp(
        password=PASSWORD,
        rules=[dict(rule) for rule in RULES],
        repository_rules=["AWS_CLIENT_ID", "GENERIC_PASSWORD", "REPO_ONLY_RULE"],
        reviewed=[(REVIEWED, "Internal token")],
    )


def sync(capsys: pytest.CaptureFixture[str], url: str, *argv: str) -> tuple[int, str, str]:
    args = [arg.format(url=url) for arg in (argv or CODE_HOSTING)]
    code = main(["sync", *args])
    out, err = capsys.readouterr()
    assert PASSWORD not in out + err
    assert API_KEY not in out + err
    return code, out, err


def cache(work: GitRepo) -> dict:
    return json.loads(cache_path(work.path, os.environ).read_text())


def test_code_hosting_sync_fills_the_cache(work, app, url, capsys) -> None:
    code, out, err = sync(capsys, url)
    assert code == 0, err
    data = cache(work)
    assert cache_path(work.path, os.environ).parent == (work.path / ".git" / "spillguard").resolve()
    assert (data["server"], data["variant"], data["scope"]) == (
        url,
        "code-hosting",
        {"project": "PRJ", "repo": "app"},
    )
    assert data["synced_at"].endswith("+00:00")
    assert data["release_line"] == {"blocking": True, "review_rule_name": True}
    assert {rule["name"]: rule["enabled"] for rule in data["rules"]} == {
        "AWS_CLIENT_ID": True,
        "GENERIC_PASSWORD": False,
        "INTERNAL_TOKEN": True,
    }
    assert data["rules"][2]["blocking"] is False
    assert [entry["rule"] for entry in data["reviewed"]] == ["INTERNAL_TOKEN"]
    assert REVIEWED not in cache_path(work.path, os.environ).read_text()
    assert "2 built-in (1 enabled), 1 custom (blocking field: yes)" in out
    assert "reviewed lines: 1 (ruleName: yes)" in out
    assert "REPO_ONLY_RULE" in err
    assert all(headers.get("X-Host-Token") == "no-check" for _, _, headers in app.requests)


def test_older_release_line_is_detected_from_the_answers(work, app, url, capsys) -> None:
    app.release = "older"
    code, out, _ = sync(capsys, url)
    assert code == 0
    data = cache(work)
    assert data["release_line"] == {"blocking": False, "review_rule_name": False}
    assert data["rules"][2]["blocking"] is None
    assert [entry["rule"] for entry in data["reviewed"]] == [None]
    assert "blocking field: no" in out


def test_sync_settings_come_from_the_configuration_files(
    work, url, capsys, tmp_path, monkeypatch
) -> None:
    # The server is the user's own choice (a repository may not name where the
    # credentials go); the scope is the repository's.
    own = tmp_path / "xdg" / "spillguard"
    own.mkdir(parents=True)
    (own / "config.toml").write_text(f'[sync]\nserver = "{url}"\n')
    monkeypatch.setenv("XDG_CONFIG_HOME", str(own.parent))
    work.write(
        ".spillguard.toml", '[sync]\nproject = "PRJ"\nrepo = "app"\nvariant = "code-hosting"\n'
    )
    code, _, err = sync(capsys, url, "--quiet")
    assert (code, err.count("error")) == (0, 0)
    assert cache(work)["scope"] == {"project": "PRJ", "repo": "app"}


@pytest.mark.parametrize(
    ("variant", "flags", "paths"),
    [
        (
            "wiki",
            ("--space", "DOCS"),
            [
                "/rest/security/latest/rules",
                "/rest/security/latest/export/reviewed/space/DOCS/findings",
                "/rest/security/latest/export/reviewed/findings",
            ],
        ),
        (
            "issue-tracker",
            ("--project", "OPS"),
            [
                "/rest/security/latest/rules",
                "/rest/security/latest/export/reviewed/project/OPS/findings",
                "/rest/security/latest/export/reviewed/findings",
            ],
        ),
    ],
)
def test_wiki_and_issue_tracker_variants(work, app, url, capsys, variant, flags, paths) -> None:
    app.variant = variant
    app.rules = [{"id": "3", "name": "MY_RULE", "regexp": "myr_[0-9a-f]{20}", "enabled": True}]
    code, out, err = sync(capsys, url, "--server", url, "--variant", variant, *flags)
    assert code == 0, err
    assert [path for _, path, _ in app.requests] == paths
    data = cache(work)
    assert [rule["name"] for rule in data["rules"]] == ["MY_RULE"]
    assert data["reviewed"][0]["rule"] == "INTERNAL_TOKEN"
    assert "reviewed lines: 1" in out


def test_hosted_variant_uses_the_api_key_and_the_password_settings(
    work, app, url, capsys, monkeypatch
) -> None:
    app.variant, app.api_key = "hosted", API_KEY
    app.password_settings = {"minLength": 8, "placeholders": False, "entropyThreshold": 3}
    monkeypatch.setenv("SPILLGUARD_API_KEY", API_KEY)
    code, out, err = sync(capsys, url, "--server", url, "--variant", "hosted")
    assert code == 0, err
    assert app.requests[0][2]["Authorization"] == f"Bearer {API_KEY}"
    assert "X-Host-Token" not in app.requests[0][2]
    data = cache(work)
    assert data["generic_password"] == {"min_length": 8, "placeholders": False}
    assert "entropyThreshold" in err
    assert "the hosted API offers no way to read them" in out


@pytest.fixture
def previous_cache(work, url, capsys) -> bytes:
    assert sync(capsys, url)[0] == 0
    return cache_path(work.path, os.environ).read_bytes()


def failed_sync(capsys, url: str, work: GitRepo, previous: bytes, *argv: str) -> str:
    code, _, err = sync(capsys, url, *argv)
    assert code == 3
    assert cache_path(work.path, os.environ).read_bytes() == previous
    assert err.count("\n") == 1
    assert "Traceback" not in err
    return err


def test_error_body_is_shown_and_the_previous_cache_kept(
    work, app, url, capsys, previous_cache
) -> None:
    app.then(
        EXPORT_PATH,
        Answer.error(400, "Invalid request", "The branch does not exist", branch="unknown"),
    )
    err = failed_sync(capsys, url, work, previous_cache)
    assert "HTTP 400" in err
    assert "Invalid request; The branch does not exist; branch: unknown" in err


def test_a_proxy_page_is_shown_as_status_and_short_excerpt(
    work, app, url, capsys, previous_cache
) -> None:
    page = "<html><head><style>p{}</style></head><body><h1>Gateway error</h1>" + "x" * 5000
    app.then("/rest/security/1.0/rules", Answer(500, page.encode(), {"Content-Type": "text/html"}))
    err = failed_sync(capsys, url, work, previous_cache)
    assert "HTTP 500" in err
    assert "(no error body) Gateway error" in err
    assert "<h1>" not in err
    assert len(err) < 400


def test_401_says_where_the_credentials_came_from(work, url, capsys, monkeypatch) -> None:
    monkeypatch.setenv("SPILLGUARD_PASSWORD", PASSWORD + "wrong")
    monkeypatch.setenv("SPILLGUARD_DEBUG", "1")
    code, _, err = sync(capsys, url)
    assert code == 3
    assert "HTTP 401" in err
    assert "SPILLGUARD_USERNAME/SPILLGUARD_PASSWORD (user ada)" in err
    assert PASSWORD + "wrong" not in err


def test_403_says_which_permission_is_missing(work, app, url, capsys) -> None:
    app.variant = "issue-tracker"
    app.then(
        "/rest/security/latest/export/reviewed/project/OPS/findings",
        Answer.error(403, "Forbidden"),
    )
    code, _, err = sync(
        capsys, url, "--server", url, "--variant", "issue-tracker", "--project", "OPS"
    )
    assert code == 3
    assert "missing permission: project administrator, or explicit app access" in err


def test_a_wrong_xsrf_header_name_is_reported(work, url, capsys) -> None:
    code, _, err = sync(capsys, url, *CODE_HOSTING, "--xsrf-header", "X-Other")
    assert code == 3
    assert "HTTP 403" in err
    assert "despite the X-Other header" in err


def test_429_honours_retry_after_then_succeeds(work, app, url, capsys) -> None:
    unavailable = Answer.error(503, "Maintenance")
    unavailable.headers["Retry-After"] = "0"
    app.then("/rest/security/1.0/rules", Answer(429, headers={"Retry-After": "0"}), unavailable)
    code, _, err = sync(capsys, url)
    assert code == 0, err
    assert [path for _, path, _ in app.requests].count("/rest/security/1.0/rules") == 3


def test_429_gives_up_after_a_bounded_number_of_tries(
    work, app, url, capsys, previous_cache
) -> None:
    app.then("/rest/security/1.0/rules", *[Answer(429, headers={"Retry-After": "0"})] * 10)
    before = len(app.requests)
    err = failed_sync(capsys, url, work, previous_cache)
    assert "HTTP 429" in err
    assert "gave up after 4 tries" in err
    assert len(app.requests) - before == 4


def test_a_long_retry_after_fails_at_once(work, app, url, capsys, previous_cache) -> None:
    app.then("/rest/security/1.0/rules", Answer(429, headers={"Retry-After": "3600"}))
    err = failed_sync(capsys, url, work, previous_cache)
    assert "asks to wait 3600 s" in err


def test_a_slow_answer_times_out(work, app, url, capsys, previous_cache) -> None:
    app.then("/rest/security/1.0/rules", Answer(0, delay=30))
    err = failed_sync(capsys, url, work, previous_cache, *CODE_HOSTING, "--timeout", "0.3")
    assert "no complete answer within 0.3 s" in err


def test_a_server_that_drips_is_cut_at_the_timeout(work, app, url, capsys, previous_cache) -> None:
    """One byte every 50 ms: no read waits long, but the exchange outlasts its timeout."""
    app.then("/rest/security/1.0/rules", Answer(200, b"[" + b" " * 600 + b"]", drip=0.05))
    err = failed_sync(capsys, url, work, previous_cache, *CODE_HOSTING, "--timeout", "1")
    assert err == "spillguard: error: GET /rest/security/1.0/rules: no complete answer within 1 s\n"


RULES_PATH = "/rest/security/1.0/rules"


def _json_answer(value: object) -> Answer:
    return Answer(200, json.dumps(value).encode(), {"Content-Type": "application/json"})


def _many_rules(count: int) -> list[dict[str, object]]:
    return [{"name": f"Team rule {n}", "regexp": f"tr{n}_[A-Za-z0-9]{{32}}"} for n in range(count)]


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        (Answer(200, b"[" * 200_000 + b"]" * 200_000), "nested more than 32 levels deep"),
        (Answer(200, b"[" + b"{}," * 1_000_000 + b"{}]"), "more than 1000000 JSON values"),
        (_json_answer(_many_rules(5_001)), "more than 5000 rules in the rule list"),
        (_json_answer([{"name": "x" * 300, "regexp": "tr_[a-z]{32}"}]), "rule name of 300 char"),
    ],
    ids=["deep", "values", "rules", "name"],
)
def test_an_answer_over_the_limits_is_refused_in_one_line_and_the_cache_kept(
    work, app, url, capsys, previous_cache, answer: Answer, expected: str
) -> None:
    app.then(RULES_PATH, answer)
    err = failed_sync(capsys, url, work, previous_cache)
    assert expected in err, err


def test_rules_across_pages_are_capped_too(work, app, url, capsys, previous_cache) -> None:
    app.rules, app.paging, app.page_size = _many_rules(5_001), "start", 1_000
    err = failed_sync(capsys, url, work, previous_cache)
    assert "more than 5000 rules in the rule list" in err


def test_too_many_reviewed_lines_are_refused(work, app, url, capsys, previous_cache) -> None:
    app.reviewed = [(f"itk_{n:032d}", "Internal token") for n in range(100_001)]
    err = failed_sync(capsys, url, work, previous_cache)
    assert f"{EXPORT_PATH}: more than 100000 reviewed lines" in err


def test_a_huge_custom_rule_is_not_applied_and_named(work, app, url, capsys) -> None:
    """A rule every scan would compile (a 3 MB one cost each commit 40 s): left out,
    and named as the rules local validation refuses are."""
    huge = "itk_(?:" + "|".join(f"x{n:05d}" for n in range(3_000)) + ")"
    app.rules = [*app.rules, {"name": "Huge", "regexp": huge, "hardcoded": False}]
    code, _, err = sync(capsys, url)
    assert code == 0
    assert "server custom rule HUGE: regexp of 21007 characters, longer than the 16384" in err
    data = cache(work)
    assert "HUGE" not in {rule["name"] for rule in data["rules"]}
    assert [rule["name"] for rule in data["refused"]] == ["HUGE"]
    assert huge not in cache_path(work.path, os.environ).read_text()


def test_a_page_of_twenty_million_objects_is_refused_in_bounded_memory(work, app, url) -> None:
    """It made sync peak at 15 GB; now it is refused before it is parsed. The child may
    not take more than 1 GB (the limit protects this machine if it tried)."""
    import resource
    import subprocess
    import sys

    app.then(RULES_PATH, Answer(200, b"[" + b"{}," * 20_000_000 + b"{}]"))
    probe = (
        "import resource, sys\n"
        "from spillguard.cli import main\n"
        "code = main(sys.argv[1:])\n"
        "print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, file=sys.stderr)\n"
        "sys.exit(code)\n"
    )

    def bounded() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))

    argv = [arg.format(url=url) for arg in CODE_HOSTING]
    done = subprocess.run(
        [sys.executable, "-c", probe, "sync", *argv],
        capture_output=True,
        text=True,
        preexec_fn=bounded,
        check=False,
    )
    assert done.returncode == 3, done.stderr
    message, peak = done.stderr.splitlines()
    assert "more than 1000000 JSON values" in message
    assert int(peak) < 400 * 1024  # kilobytes


def test_escape_sequences_in_server_rule_names_reach_the_terminal_as_text(
    work, app, url, capsys
) -> None:
    app.rules = [{**CUSTOM, "name": "Internal \x1b]0;owned\x07token\x1b[2J"}]
    assert sync(capsys, url)[0] == 0
    assert main(["rules"]) == 0
    out = capsys.readouterr().out
    assert "\x1b" not in out
    assert "\x07" not in out
    assert "server: Internal \\x1b]0;owned\\x07token\\x1b[2J (enabled)" in out


def test_a_redirect_is_not_followed(work, app, url, capsys, previous_cache) -> None:
    app.then("/rest/security/1.0/rules", Answer(302, headers={"Location": "http://elsewhere/"}))
    err = failed_sync(capsys, url, work, previous_cache)
    assert "redirected to http://elsewhere/" in err
    assert len(app.requests) == 6  # the five of the first sync and this one


def test_zip_export_with_a_path_traversal_name_is_read_in_memory(
    work, app, url, capsys, tmp_path
) -> None:
    app.export_override = zip_of(
        {
            "../../escaped.csv": f"id,MATCHTEXT,Rule_Name,extra\n1,{REVIEWED},Internal token,x\n".encode(),
            "readme.txt": b"not a CSV",
        }
    )
    code, out, err = sync(capsys, url)
    assert code == 0, err
    assert "reviewed lines: 1 (ruleName: yes)" in out
    assert [entry["rule"] for entry in cache(work)["reviewed"]] == ["INTERNAL_TOKEN"]
    assert not list(tmp_path.rglob("escaped.csv"))
    assert not (tmp_path.parent / "escaped.csv").exists()


@pytest.mark.parametrize(
    ("export", "message"),
    [
        (b'matchText,ruleName\n"unclosed,X\n', "malformed CSV"),
        (b"matchText,ruleName\nabc,X,extra\n", "row 2 has 3 fields, the header 2"),
        (b"id,text\n1,abc\n", "no matchText column (columns: id, text)"),
        (b"matchText\nabc\nExport cancelled\n", "the server cancelled the export"),
        (b"matchText\n\x80bad\n", "not UTF-8"),
        (b"PK\x03\x04broken", "not a readable zip"),
    ],
)
def test_a_bad_export_is_a_clear_error(
    work, app, url, capsys, previous_cache, export, message
) -> None:
    app.export_override = export
    err = failed_sync(capsys, url, work, previous_cache)
    assert message in err


def test_https_with_a_ca_bundle(work, app, capsys, tmp_path) -> None:
    with serve(app, tls_folder=tmp_path) as base:
        code, _, err = sync(capsys, base, *CODE_HOSTING)
        assert code == 3
        assert "not trusted" in err
        bundle = tmp_path / ("ca.pem" if (tmp_path / "ca.pem").exists() else "cert.pem")
        code, _, err = sync(capsys, base, *CODE_HOSTING, "--ca-bundle", str(bundle))
        assert code == 0, err
    assert cache(work)["server"].startswith("https://127.0.0.1:")


def test_plain_http_to_another_host_is_refused(work, capsys) -> None:
    code, _, err = sync(
        capsys, "", "--server", "http://scm.example.com", "--project", "P", "--repo", "r"
    )
    assert code == 2  # a refused --server is a usage error: nothing was tried
    assert "refusing to send credentials over plain http to scm.example.com" in err


def test_credentials_from_netrc(work, app, url, capsys, monkeypatch) -> None:
    monkeypatch.delenv("SPILLGUARD_USERNAME")
    monkeypatch.delenv("SPILLGUARD_PASSWORD")
    netrc = work.path.parent / "netrc"
    netrc.write_text(f"machine 127.0.0.1 login ada password {PASSWORD}\n")
    netrc.chmod(0o600)
    monkeypatch.setenv("NETRC", str(netrc))
    code, out, err = sync(capsys, url)
    assert code == 0, err
    assert "as ~/.netrc (user ada)" in out


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({}, "no credentials for 127.0.0.1: set SPILLGUARD_USERNAME and SPILLGUARD_PASSWORD"),
        ({"SPILLGUARD_USERNAME": "ada"}, "SPILLGUARD_PASSWORD is not set"),
    ],
)
def test_missing_credentials_are_a_usage_error(
    work, url, capsys, monkeypatch, env, message
) -> None:
    monkeypatch.delenv("SPILLGUARD_USERNAME")
    monkeypatch.delenv("SPILLGUARD_PASSWORD")
    monkeypatch.setenv("NETRC", str(work.path.parent / "absent"))
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    code, _, err = sync(capsys, url)
    assert (code, message in err) == (2, True)


def test_the_variant_scope_is_required(work, url, capsys) -> None:
    code, _, err = sync(capsys, url, "--server", url, "--variant", "wiki")
    assert code == 2
    assert "the wiki variant needs --space" in err


def test_a_server_custom_rule_named_like_a_built_in_one_is_left_out(work, app, url, capsys) -> None:
    app.rules.append({**CUSTOM, "name": "aws client id", "enabled": True})
    code, _, err = sync(capsys, url)
    assert code == 0, err
    assert "server custom rule AWS_CLIENT_ID has the name of a built-in rule; not used" in err
    assert [rule["kind"] for rule in cache(work)["rules"] if rule["name"] == "AWS_CLIENT_ID"] == [
        "builtin"
    ]


def test_a_refused_api_key_says_why_keys_stop_working(work, app, url, capsys, monkeypatch) -> None:
    app.variant, app.api_key = "hosted", API_KEY
    monkeypatch.setenv("SPILLGUARD_API_KEY", API_KEY[::-1])
    code, _, err = sync(capsys, url, "--server", url, "--variant", "hosted")
    assert code == 3
    assert "HTTP 401" in err
    assert "they came from SPILLGUARD_API_KEY (API key)" in err
    assert "expires, is revoked, its issuer is no longer an app administrator" in err
    assert API_KEY[::-1] not in err


def test_a_mistyped_server_url_is_not_echoed(work, capsys) -> None:
    code, _, err = sync(
        capsys, "", "--server", f"ada:{PASSWORD}@scm", "--project", "P", "--repo", "r"
    )
    assert code == 2
    assert "the server is not an http(s) URL" in err
    assert PASSWORD not in err


@pytest.mark.parametrize("header", ["Authorization", "X Bad"])
def test_an_xsrf_header_name_must_not_replace_the_clients_own(work, url, capsys, header) -> None:
    code, _, err = sync(capsys, url, *CODE_HOSTING, "--xsrf-header", header)
    assert code == 2
    assert "is not a usable HTTP header name" in err


@pytest.mark.parametrize("timeout", ["0", "-1", "3600"])
def test_the_timeout_is_bounded(work, url, capsys, timeout) -> None:
    code, _, err = sync(capsys, url, *CODE_HOSTING, "--timeout", timeout)
    assert (code, "timeout must be more than 0 and at most 300 seconds" in err) == (2, True)
