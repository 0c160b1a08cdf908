"""``spillguard sync --compare``: the server's own scan of a branch beside a local scan."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from spillguard.cli import main
from testing.fake_server import FakeApp, invalid_line
from testing.tokens import expand

if TYPE_CHECKING:
    from testing.gitrepo import GitRepo

PASSWORD = expand("pw-{rand:Aa0:24}", "compare-password")
RULES = [
    {"id": "7", "name": "Internal token", "regexp": "itk_[A-Za-z0-9]{32}", "hardcoded": False}
    | {"enabled": True, "blocking": True},
    {"id": "1", "name": "AWS_CLIENT_ID", "hardcoded": True, "enabled": True},
]
SCOPE = ["--server", "{url}", "--project", "PRJ", "--repo", "app"]


def token(seed: str) -> str:
    return expand("itk_{rand:Aa0:32}", f"compare-{seed}")


@pytest.fixture
def app() -> FakeApp:
    return FakeApp(password=PASSWORD, rules=[dict(rule) for rule in RULES])


def synced(work: GitRepo, url: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["sync", *[arg.format(url=url) for arg in SCOPE]]) == 0
    capsys.readouterr()


def run_compare(url: str, capsys: pytest.CaptureFixture[str], *flags: str) -> tuple[int, str, str]:
    code = main(["sync", "--compare", *[arg.format(url=url) for arg in SCOPE], *flags])
    out, err = capsys.readouterr()
    assert PASSWORD not in out + err
    return code, out, err


def commit_lines(work: GitRepo, lines: list[str]) -> None:
    work.write("deploy.cfg", "".join(f"{line}\n" for line in lines))
    work.commit("deploy", "deploy.cfg")


def test_the_same_findings_agree(work, app, url, capsys) -> None:
    lines = [f"internal = {token('one')}", f"# 🔑🔑 backup = {token('two')}"]
    commit_lines(work, lines)
    # Java counts the emoji before the match as two units each: the server's offsets.
    app.scans["main"] = [invalid_line(line, line.split("= ")[1]) for line in lines]
    synced(work, url, capsys)
    code, out, _ = run_compare(url, capsys, "--branch", "main")
    assert code == 0, out
    assert "2 distinct findings" in out
    assert out.rstrip().endswith("the results agree")


def test_each_difference_is_named_and_masked(work, app, url, capsys) -> None:
    both, mine, theirs = token("both"), token("mine"), token("theirs")
    commit_lines(work, [f"a = {both}", f"b = {mine}"])
    app.scans["main"] = [invalid_line(f"a = {both}", both), invalid_line(f"c = {theirs}", theirs)]
    synced(work, url, capsys)
    code, out, _ = run_compare(url, capsys, "--branch", "main")
    assert code == 1
    server_part = out.split("only on the server (1):", 1)[1].split("only here", 1)[0]
    assert "c = ********" in server_part  # masked from the first character
    here_part = out.split("only here (1):", 1)[1]
    assert "deploy.cfg:2  INTERNAL_TOKEN" in here_part
    assert "b = ********" in here_part
    assert mine not in out
    assert theirs not in out
    assert out.rstrip().endswith("the results differ")
    code, out, _ = run_compare(url, capsys, "--branch", "main", "--include-plaintext")
    assert mine in out
    assert theirs in out


@pytest.mark.parametrize("release", ["latest", "older"])
def test_every_page_of_the_servers_result_is_read(work, app, url, capsys, release) -> None:
    lines = [f"k{number} = {token(str(number))}" for number in range(230)]
    commit_lines(work, lines)
    app.release = release
    app.scans["main"] = [invalid_line(line, line.split(" = ")[1]) for line in lines]
    synced(work, url, capsys)
    app.requests.clear()
    code, out, _ = run_compare(url, capsys, "--branch", "main")
    assert code == 0, out
    assert "server: branch main, 230 distinct findings" in out
    starts = [target.split("start=")[1].split("&")[0] for _, target, _ in app.requests]
    # An older release line sends everything at once and ignores start: a repeated page ends it.
    assert starts == (["0", "100", "200"] if release == "latest" else ["0", "230"])


def test_the_local_side_is_the_remote_tracking_branch(work, app, url, capsys) -> None:
    pushed = token("pushed")
    commit_lines(work, [f"a = {pushed}"])
    work.git("update-ref", "refs/remotes/origin/main", "HEAD")
    commit_lines(work, [f"a = {pushed}", f"b = {token('unpushed')}"])
    app.scans["main"] = [invalid_line(f"a = {pushed}", pushed)]
    synced(work, url, capsys)
    code, out, _ = run_compare(url, capsys, "--branch", "main")
    assert code == 0, out
    assert "the history of refs/remotes/origin/main" in out


def test_a_branch_the_server_has_not_scanned_is_an_error(work, app, url, capsys) -> None:
    commit_lines(work, ["nothing = 1"])
    synced(work, url, capsys)
    code, _, err = run_compare(url, capsys, "--branch", "feature")
    assert code == 3
    assert "no scan result for branch feature" in err
    assert "Traceback" not in err


def test_a_result_for_an_older_commit_is_said(work, app, url, capsys) -> None:
    commit_lines(work, ["nothing = 1"])
    app.scans["main"] = []
    app.scans_actual = False
    synced(work, url, capsys)
    code, _, err = run_compare(url, capsys)
    assert code == 0
    assert "not for the branch's latest commit" in err


def test_what_cannot_be_reproduced_is_named_beside_the_comparison(work, app, url, capsys) -> None:
    app.rules = [*app.rules, {"name": "PAYROLL_EXPORT", "hardcoded": True, "enabled": True}]
    commit_lines(work, ["nothing = 1"])
    app.scans["main"] = []
    synced(work, url, capsys)
    code, _, err = run_compare(url, capsys, "--branch", "main")
    assert code == 0
    assert "PAYROLL_EXPORT" in err


def test_a_variant_without_scan_results_is_one_clear_line(work, app, url, capsys) -> None:
    code = main(["sync", "--compare", "--variant", "wiki", "--server", url, "--space", "DOCS"])
    err = capsys.readouterr().err
    assert code == 2
    assert err.count("\n") == 1
    assert "the wiki variant offers no scan result of a branch" in err


def test_the_servers_error_body_is_shown(work, app, url, capsys) -> None:
    from testing.fake_server import Answer

    commit_lines(work, ["nothing = 1"])
    synced(work, url, capsys)
    refused = Answer.error(404, "Not Found", "Repository app does not exist in project PRJ")
    app.then("/rest/security/1.0/scan/PRJ/repos/app", refused)
    code, _, err = run_compare(url, capsys, "--branch", "main")
    assert code == 3
    assert "HTTP 404" in err
    assert "Repository app does not exist in project PRJ" in err
