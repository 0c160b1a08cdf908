"""End to end: real ``git push`` into a real bare repository with the pre-receive hook.

One server is shared by the module (pushes are slow to set up). Rejected pushes leave
it as it was; accepted ones go to branch names no other test uses.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

import pytest
import regex

from spillguard.cli import main
from testing.server import Server, install_hook
from testing.tokens import expand

if TYPE_CHECKING:
    from collections.abc import Iterator


def aws_key(seed: str) -> str:
    return expand("AKIA{rand:A2:16}", seed)


def password(seed: str) -> str:
    return expand('password = "{rand:Aa0:14}"', seed)


#: The repository's own file on main: it disables a rule (fine, when the administrator
#: trusts repository files) and tries to set the administrator's policy (never fine).
REPOSITORY_FILE = """\
disabled_rules = ["GENERIC_PASSWORD"]
allowlist_paths = ['vendor/.*']
bypass_token = ""
time_budget = 0

[hook]
mode = "warn"
"""

LEGACY_KEY = aws_key("legacy")
REVIEWED_KEY = aws_key("reviewed")


@pytest.fixture(scope="module", params=["sha1", "sha256"])
def server(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Server:
    """main (with a .spillguard.toml) and ``legacy`` (a secret pushed before the hook);
    every test runs in both object formats (SHA-256: git alone reads the push)."""
    server = Server(tmp_path_factory.mktemp("server"), object_format=request.param)
    work = server.work
    work.write("README.md", "hello\n")
    review = ["review", "add", REVIEWED_KEY, "--repo", str(work.path), "--reason", "a fixture"]
    assert main(review) == 0
    work.write(".spillguard.toml", REPOSITORY_FILE)  # a client refuses its policy keys
    work.commit("base")
    work.git("checkout", "-q", "-b", "legacy")
    work.write("old.env", f"AWS_ID={LEGACY_KEY}\n")
    work.commit("legacy secret")
    server.push("main", "legacy")
    install_hook(server.bare.path)
    return server


@pytest.fixture(autouse=True)
def fresh(server: Server) -> Iterator[None]:
    """Each test starts on a new local branch at main, with no administrator's file."""
    server.work.git("checkout", "-q", "--detach", "main")
    yield
    (server.bare.path / "spillguard.toml").unlink(missing_ok=True)
    server.work.git("reset", "-q", "--hard")
    server.work.git("clean", "-q", "-fd")


def commit(server: Server, path: str, text: str, message: str = "change") -> str:
    server.work.write(path, text)
    return server.work.commit(message)


def test_blocking_finding_rejects_push_and_shows_it_masked(server: Server) -> None:
    before = server.refs()
    key = aws_key("reject")
    first = commit(server, "app/settings.py", f"x = 1\naws = '{key}'\n")
    code, output = server.push("HEAD:refs/heads/reject")
    assert code != 0
    assert "[remote rejected]" in output
    # the fixed mask of the local hooks: the marker, then 8 stars whatever the length
    line = (
        f"blocking  {first[:10]}  refs/heads/reject  app/settings.py:2  AWS_CLIENT_ID  AKIA********"
    )
    assert regex.search(regex.escape(line) + r"\s*$", output, flags=regex.MULTILINE), output
    assert key not in output
    assert not regex.search(r"[0-9a-f]{32,}", output)  # no hash to try candidates against
    assert "push rejected: it adds secrets" in output
    assert "git commit --amend" in output
    assert "pragma: allowlist-secret" in output
    assert server.refs() == before


def test_the_hook_defines_no_dataclass(server: Server) -> None:
    """The hook, a finding reported, never imports ``dataclasses`` (nor ``inspect``
    and ``ast``, which it brings: a sixth of a hook's start-up), nor libgit2, nor
    ``tempfile`` and ``shutil`` (with bz2 and lzma) for its scratch folder, nor
    ``typing`` for its annotations or ``argparse`` for its fixed command line (8 %
    of a one-commit push's instructions)."""
    hook = server.bare.path / "hooks" / "pre-receive"
    installed = hook.read_text()
    modules = (
        "{'pygit2', 'dataclasses', 'inspect', 'ast', 'tempfile', 'shutil', 'typing', 'argparse'}"
    )
    code = (
        "import sys; from spillguard.cli import main; code = main(['hook', 'pre-receive']); "
        f"print('loaded:', *sorted({modules} & sys.modules.keys()), file=sys.stderr); "
        "sys.exit(code)"
    )
    hook.write_text(f'#!/bin/sh\nexec "{sys.executable}" -c "{code}"\n')
    try:
        commit(server, "a.env", f"AWS_ID={aws_key('imports')}\n")
        code_, output = server.push("HEAD:refs/heads/imports")
    finally:
        hook.write_text(installed)
    assert code_ != 0
    assert "AWS_CLIENT_ID" in output
    assert regex.search(r"loaded:\s*$", output, flags=regex.MULTILINE), output


def test_clean_push_is_accepted(server: Server) -> None:
    tip = commit(server, "notes.txt", "nothing secret\n")
    code, output = server.push("HEAD:refs/heads/clean")
    assert code == 0, output
    assert "1 new commit(s) on 1 ref(s)" in output
    assert server.refs()["refs/heads/clean"] == tip


def test_warn_mode_accepts_and_shows_the_finding(server: Server) -> None:
    server.admin('[hook]\nmode = "warn"\n')
    tip = commit(server, "a.env", f"AWS_ID={aws_key('warn')}\n")
    code, output = server.push("HEAD:refs/heads/warned")
    assert code == 0, output
    assert f"{tip[:10]}  refs/heads/warned  a.env:1  AWS_CLIENT_ID" in output
    assert "push accepted (warn-only mode)" in output
    assert server.refs()["refs/heads/warned"] == tip


def test_custom_rule_that_does_not_block_only_warns(server: Server) -> None:
    server.admin(
        "[custom_rules]\nINTERNAL_TOKEN = { regexp = 'itk_[a-z0-9]{24}', blocking = false }\n"
    )
    tip = commit(server, "a.txt", f"token {expand('itk_{rand:a0:24}', 'itk')}\n")
    code, output = server.push("HEAD:refs/heads/custom-warn")
    assert code == 0, output
    assert "warning  " in output
    assert "INTERNAL_TOKEN" in output
    assert "push accepted (warnings only)" in output
    assert server.refs()["refs/heads/custom-warn"] == tip


def test_multi_ref_push_rejects_all_and_names_the_ref_with_the_secret(server: Server) -> None:
    before = server.refs()
    clean = commit(server, "ok.txt", "fine\n")
    server.work.git("branch", "-f", "multi-clean", clean)
    dirty = commit(server, "bad.txt", f"{aws_key('multi')}\n")
    server.work.git("tag", "-a", "-m", "release", "multi-tag", clean)
    code, output = server.push(
        "multi-clean:refs/heads/multi-clean",
        f"{dirty}:refs/heads/multi-dirty",
        "refs/tags/multi-tag",
    )
    assert code != 0
    assert "2 new commit(s) on 3 ref(s)" in output
    assert f"{dirty[:10]}  refs/heads/multi-dirty  bad.txt:1" in output
    assert output.count("AWS_CLIENT_ID  ") == 1
    assert server.refs() == before


def test_secret_added_then_removed_in_one_push_is_rejected(server: Server) -> None:
    before = server.refs()
    added = commit(server, "cfg.env", f"AWS_ID={aws_key('removed')}\n", "add")
    commit(server, "cfg.env", "AWS_ID=${AWS_ID}\n", "remove")
    code, output = server.push("HEAD:refs/heads/add-remove")
    assert code != 0
    assert f"{added[:10]}  refs/heads/add-remove  cfg.env:1  AWS_CLIENT_ID" in output
    assert server.refs() == before


def test_pragma_added_in_a_later_commit_is_too_late(server: Server) -> None:
    key = aws_key("late")
    added = commit(server, "k.py", f"KEY = '{key}'\n", "add")
    commit(server, "k.py", f"KEY = '{key}'  # pragma: allowlist-secret\n", "allowlist")
    code, output = server.push("HEAD:refs/heads/late-pragma")
    assert code != 0
    assert f"{added[:10]}  refs/heads/late-pragma  k.py:1" in output


def test_pragma_in_the_commit_that_adds_the_line_is_accepted(server: Server) -> None:
    commit(server, "k.py", f"KEY = '{aws_key('early')}'  # pragma: allowlist-secret\n")
    code, output = server.push("HEAD:refs/heads/early-pragma")
    assert code == 0, output
    assert "spillguard: silenced: 1 by a pragma" in output


@pytest.mark.parametrize(
    ("admin", "pragma"),
    [
        ('locked_rules = ["AWS_CLIENT_ID"]\n', "  # pragma: allowlist-secret"),
        ("allow_pragma = false\n", "  # pragma: allowlist-secret"),
        ("", "# pragma: allowlist-secret"),  # glued to the code: not the server's form
        ("", "  #pragma:allowlist-secret"),
    ],
    ids=["locked", "off", "glued", "unspaced"],
)
def test_a_pragma_silences_neither_a_locked_rule_nor_when_off_nor_in_another_form(
    server: Server, admin: str, pragma: str
) -> None:
    server.admin(admin)
    branch = f"pragma-{len(admin)}-{len(pragma)}"
    tip = commit(server, "k.py", f"KEY = '{aws_key(branch)}'{pragma}\n")
    code, output = server.push(f"HEAD:refs/heads/{branch}")
    assert code == 1, output
    assert f"{tip[:10]}  refs/heads/{branch}  k.py:1  AWS_CLIENT_ID" in output
    assert "silenced" not in output


def test_every_silenced_finding_is_counted_in_the_push_summary(server: Server) -> None:
    """main's trusted file allowlists vendor/ and reviews REVIEWED_KEY: all three are
    accepted, and none goes unseen."""
    server.admin("repository_config = true\n")
    server.work.write("vendor/lib.env", f"A={aws_key('silenced-path')}\n")
    server.work.write("fixture.py", f"KEY = '{REVIEWED_KEY}'\n")
    commit(server, "k.py", f"KEY = '{aws_key('silenced')}'  # pragma: allowlist-secret\n")
    code, output = server.push("HEAD:refs/heads/silenced")
    assert code == 0, output
    assert "spillguard: silenced: 1 by a pragma, 1 by allowlist_paths, 1 reviewed" in output


def test_force_push_judges_only_the_commits_the_server_lacks(server: Server) -> None:
    base = commit(server, "f.txt", "one\n")
    assert server.push("HEAD:refs/heads/forced")[0] == 0
    server.work.git("reset", "-q", "--hard", "HEAD~1")
    rewritten = commit(server, "f.txt", f"{aws_key('forced')}\n", "rewrite")
    code, output = server.push("--force", "HEAD:refs/heads/forced")
    assert code != 0
    assert f"{rewritten[:10]}  refs/heads/forced  f.txt:1" in output
    assert server.refs()["refs/heads/forced"] == base
    # forcing the branch back to a commit the server already has brings nothing new,
    # and is answered before the rules load
    code, output = server.push("--force", "main:refs/heads/forced")
    assert code == 0, output
    assert "it moves refs to commits the repository has and brings no object" in output


def test_new_branch_and_tag_on_an_old_commit_cost_nothing(server: Server) -> None:
    """The legacy commit holds a secret, but it is already on the server."""
    server.work.git("tag", "-a", "-m", "old release", "old-release", "legacy")
    code, output = server.push("legacy:refs/heads/from-legacy", "refs/tags/old-release")
    assert code == 0, output
    assert "0 new commit(s) on 2 ref(s)" in output
    assert LEGACY_KEY[4:] not in output


def test_annotated_tag_on_a_new_commit_is_peeled_and_judged(server: Server) -> None:
    before = server.refs()
    tagged = commit(server, "t.env", f"AWS_ID={aws_key('tag')}\n")
    server.work.git("tag", "-a", "-m", "release", "new-release", tagged)
    code, output = server.push("refs/tags/new-release")
    assert code != 0
    assert f"{tagged[:10]}  refs/tags/new-release  t.env:1" in output
    assert server.refs() == before


def test_tags_of_a_blob_or_a_tree_are_judged_whole(server: Server) -> None:
    """No commit carries them, so nothing else would ever look at them."""
    before = server.refs()
    work = server.work
    text = f"A={aws_key('tagged')}\n"
    blob = work.git("hash-object", "-w", "--stdin", input_text=text).strip()
    work.git("tag", "blob-tag", blob)
    work.write("deep/k.env", text)
    work.git("add", "deep/k.env")
    tree = work.git("write-tree").strip()
    work.git("tag", "-a", "-m", "a tree", "tree-tag", tree)
    code, output = server.push("refs/tags/blob-tag", "refs/tags/tree-tag")
    assert code != 0
    assert "-  refs/tags/blob-tag  refs/tags/blob-tag:1  AWS_CLIENT_ID" in output
    assert "-  refs/tags/tree-tag  refs/tags/tree-tag:deep/k.env:1  AWS_CLIENT_ID" in output
    assert server.refs() == before


def test_branch_deletion_is_accepted_without_scanning(server: Server) -> None:
    commit(server, "d.txt", "bye\n")
    assert server.push("HEAD:refs/heads/doomed")[0] == 0
    code, output = server.push(":refs/heads/doomed")
    assert code == 0, output
    assert "refs/heads/doomed" not in server.refs()


def test_bypass_token_skips_that_commit_only_and_says_so(server: Server) -> None:
    skipped = commit(server, "b.env", f"A={aws_key('bypass')}\n", "hotfix skip-secret-scan")
    commit(server, "ok.txt", "fine\n")
    code, output = server.push("HEAD:refs/heads/bypassed")
    assert code == 0, output
    assert f"commit {skipped[:10]} (refs/heads/bypassed) not scanned" in output
    assert "'skip-secret-scan'" in output
    verdict = "push accepted: 1 commit not scanned (bypass token); no secrets found in the other 1"
    assert f"spillguard: {verdict}" in output
    assert "no secrets found\n" not in output


def test_the_bypass_token_applies_to_its_own_commit_only(server: Server) -> None:
    """Two commits with secrets in one push, the first bypassed: rejected, for the second."""
    before = server.refs()
    bypassed = commit(server, "b.env", f"A={aws_key('one')}\n", "fixture skip-secret-scan")
    ordinary = commit(server, "c.env", f"B={aws_key('two')}\n", "not bypassed")
    code, output = server.push("HEAD:refs/heads/bypass-one")
    assert code == 1, output
    assert f"blocking  {ordinary[:10]}  refs/heads/bypass-one  c.env:1  AWS_CLIENT_ID" in output
    assert f"{bypassed[:10]}  refs/heads/bypass-one  b.env" not in output
    assert f"commit {bypassed[:10]} (refs/heads/bypass-one) not scanned" in output
    assert server.refs() == before


def test_the_servers_documented_token_is_a_default_and_the_list_is_the_administrators(
    server: Server,
) -> None:
    commit(server, "s.env", f"A={aws_key('soteri')}\n", "vendored skip-soteri-security-check")
    code, output = server.push("HEAD:refs/heads/soteri-token")
    assert code == 0, output
    assert "its message contains the bypass token 'skip-soteri-security-check'" in output
    server.admin('bypass_token = ["ops-override"]\n')
    tip = commit(server, "t.env", f"A={aws_key('ops')}\n", "skip-secret-scan, not any more")
    code, output = server.push("HEAD:refs/heads/soteri-token")
    assert code == 1, output
    assert f"{tip[:10]}  refs/heads/soteri-token  t.env:1" in output
    server.work.git("commit", "-q", "--amend", "-m", "ops-override")
    code, output = server.push("HEAD:refs/heads/soteri-token")
    assert code == 0, output
    assert "push accepted: 1 commit not scanned (bypass token)" in output


@pytest.mark.parametrize("advertised", [False, True])
def test_the_administrator_decides_whether_a_rejection_advertises_the_token(
    server: Server, advertised: bool
) -> None:
    server.admin(f"advertise_bypass_token = {str(advertised).lower()}\n")
    commit(server, "b.env", f"A={aws_key(f'advertise-{advertised}')}\n")
    code, output = server.push(f"HEAD:refs/heads/advertise-{advertised}")
    assert code == 1, output
    hint = "To push a commit unchecked, put 'skip-secret-scan' in its message"
    assert (hint in output) is advertised


def test_bypass_token_disabled_by_the_administrator(server: Server) -> None:
    server.admin('bypass_token = ""\nadvertise_bypass_token = true\n')
    commit(server, "b.env", f"A={aws_key('nobypass')}\n", "hotfix skip-secret-scan")
    code, output = server.push("HEAD:refs/heads/no-bypass")
    assert code != 0
    assert "not scanned" not in output
    assert "To push a commit unchecked" not in output


@pytest.mark.parametrize(
    ("admin", "notice"),
    [
        ("", "spillguard: push rejected"),  # untrusted: .spillguard.toml is not even read
        (
            'repository_config = true\nlocked_rules = ["GENERIC_PASSWORD"]\n',
            "rule GENERIC_PASSWORD is locked by the administrator; it stays enabled",
        ),
    ],
)
def test_repository_file_cannot_disable_a_rule_unless_trusted(
    server: Server, admin: str, notice: str
) -> None:
    server.admin(admin)
    commit(server, "db.py", f"{password(admin)}\n")  # main's file disables GENERIC_PASSWORD
    code, output = server.push("HEAD:refs/heads/disabled-by-file")
    assert code != 0
    assert "refs/heads/disabled-by-file  db.py:1  GENERIC_PASSWORD" in output
    assert notice in output


def test_trusted_repository_file_applies_its_rules_but_not_the_policy(server: Server) -> None:
    server.admin("repository_config = true\n")
    commit(server, "db.py", f"{password('trusted')}\n")  # GENERIC_PASSWORD is off on main
    commit(server, "k.env", f"A={aws_key('trusted')}\n")
    code, output = server.push("HEAD:refs/heads/trusted")
    assert code != 0  # the file's mode = "warn" is the administrator's to set
    assert "GENERIC_PASSWORD" not in output
    assert "AWS_CLIENT_ID" in output
    for key in ("bypass_token", "hook", "time_budget"):
        assert f".spillguard.toml on refs/heads/main: {key} is the administrator's setting" in (
            output
        )


@pytest.mark.parametrize("trusted", [False, True])
def test_reviewed_entries_on_the_default_branch_count_when_trusted(
    server: Server, trusted: bool
) -> None:
    server.admin(f"repository_config = {str(trusted).lower()}\n")
    commit(server, f"fixture-{trusted}.py", f"KEY = '{REVIEWED_KEY}'\n")
    code, output = server.push(f"HEAD:refs/heads/reviewed-{trusted}")
    assert (code == 0) is trusted, output
    assert ("AWS_CLIENT_ID" in output) is not trusted


@pytest.mark.parametrize("locked", [False, True])
def test_repository_allowlist_paths_never_hide_a_locked_rule(server: Server, locked: bool) -> None:
    lock = 'locked_rules = ["AWS_CLIENT_ID"]\n' if locked else ""
    server.admin(f"repository_config = true\n{lock}")
    commit(server, f"vendor/lib-{locked}.env", f"A={aws_key(f'vendored-{locked}')}\n")
    code, output = server.push(f"HEAD:refs/heads/vendored-{locked}")
    assert (code != 0) is locked, output
    assert (f"vendor/lib-{locked}.env:1  AWS_CLIENT_ID" in output) is locked


def test_a_push_cannot_loosen_the_rules_that_judge_it(server: Server) -> None:
    server.admin("repository_config = true\n")
    server.work.write(".spillguard.toml", 'disabled_rules = ["AWS_CLIENT_ID"]\n')
    commit(server, "k.env", f"A={aws_key('loosen')}\n")
    code, output = server.push("HEAD:refs/heads/main")
    assert code != 0
    assert "refs/heads/main  k.env:1  AWS_CLIENT_ID" in output


LIMITS = {
    "cap": ("max_commits = 1\n", "the push brings more than 1 new commits (the cap); 1 were"),
    "budget": ("time_budget = 0\n", "the time budget of 0 s ran out"),
}


@pytest.mark.parametrize("limit", sorted(LIMITS))
@pytest.mark.parametrize("accepted", [False, True])
def test_exceeded_limit_follows_the_administrators_choice(
    server: Server, limit: str, accepted: bool
) -> None:
    setting, message = LIMITS[limit]
    server.admin(setting + ('on_error = "accept"\n' if accepted else ""))
    commit(server, "1.txt", f"{limit}\n")
    tip = commit(server, "2.txt", f"{accepted}\n")
    code, output = server.push(f"HEAD:refs/heads/{limit}-{accepted}")
    assert (code == 0) is accepted
    verdict = "accepted UNCHECKED" if accepted else "rejected"
    assert f"push {verdict} by policy (on_error = {'accept' if accepted else 'reject'}): " in output
    assert message in output
    assert (server.refs().get(f"refs/heads/{limit}-{accepted}") == tip) is accepted


#: A custom rule the load-time probes pass (they cannot parse \p{..}) and that takes
#: forever on SLOW_LINE: what a rule timeout or the push's deadline must stop.
SLOW_RULE = "[custom_rules]\nSLOW = '((?:\\p{Lu}\\p{Ll})+)+$'\n"
SLOW_LINE = "Ab" * 2000 + "!\n"


@pytest.mark.parametrize("accepted", [False, True])
def test_a_rule_timeout_during_a_push_ends_in_the_on_error_verdict(
    server: Server, accepted: bool
) -> None:
    policy = 'on_error = "accept"\n' if accepted else ""
    server.admin(f"max_rule_timeout = 0.5\n{policy}{SLOW_RULE}")
    commit(server, "slow.txt", SLOW_LINE)
    code, output = server.push(f"HEAD:refs/heads/rule-timeout-{accepted}")
    assert (code == 0) is accepted, output
    assert "rule error: SLOW: rule SLOW exceeded its time budget of 0.5 s" in output
    verdict = "accepted UNCHECKED" if accepted else "rejected"
    assert f"push {verdict} by policy (on_error = " in output
    assert "part of the push could not be judged" in output
    assert "no secrets found" not in output


def test_the_time_budget_stops_judging_inside_a_file_and_a_finding_still_rejects(
    server: Server,
) -> None:
    """The slow line would hold the rule for its own 20 s budget: the push's deadline
    ends it (no rule error), and the secret found before still rejects the push."""
    server.admin(f"time_budget = 5\n{SLOW_RULE}")
    before = server.refs()
    leak = commit(server, "k.env", f"A={aws_key('budget')}\n")
    commit(server, "slow.txt", SLOW_LINE)
    code, output = server.push("HEAD:refs/heads/budget-finding")
    assert code == 1, output
    assert f"{leak[:10]}  refs/heads/budget-finding  k.env:1  AWS_CLIENT_ID" in output
    assert "push rejected: it adds secrets (and the time budget of 5 s ran out" in output
    assert "rule error" not in output
    assert server.refs() == before


def test_repository_text_cannot_inject_terminal_escapes(server: Server) -> None:
    commit(server, "evil\x1b]0;owned\x07\x1b[2J.env", f"A={aws_key('escape')}\n")
    code, output = server.push("HEAD:refs/heads/escape")
    assert code != 0
    assert "\x1b" not in output
    assert "evil\\x1b]0;owned\\x07\\x1b[2J.env:1" in output


def test_push_option_break_glass_accepts_unscanned_and_records_it(server: Server) -> None:
    server.admin('bypass_push_option = "spillguard-bypass"\n')
    server.bare.git("config", "receive.advertisePushOptions", "true")
    pushed = commit(server, "glass.env", f"A={aws_key('glass')}\n")
    code, output = server.push("-o", "spillguard-bypass", "HEAD:refs/heads/break-glass")
    assert code == 0, output
    assert "push accepted UNCHECKED: push option 'spillguard-bypass'" in output
    assert server.refs()["refs/heads/break-glass"] == pushed
    log = (server.bare.path / "spillguard-bypass.log").read_text()
    assert f"refs/heads/break-glass:{'0' * 10}..{pushed[:10]}" in log
    assert "option=spillguard-bypass" in log


def test_a_break_glass_push_that_cannot_be_recorded_is_refused(server: Server) -> None:
    """No record, no bypass: the push is scanned as usual, and this one is rejected."""
    server.admin('bypass_push_option = "spillguard-bypass"\n')
    server.bare.git("config", "receive.advertisePushOptions", "true")
    log = server.bare.path / "spillguard-bypass.log"
    log.unlink(missing_ok=True)
    log.mkdir()  # as root no permission keeps a file from being written: a directory does
    try:
        before = server.refs()
        pushed = commit(server, "glass.env", f"A={aws_key('unrecorded')}\n")
        code, output = server.push("-o", "spillguard-bypass", "HEAD:refs/heads/unrecorded")
    finally:
        log.rmdir()
    assert code != 0, output
    assert "push option 'spillguard-bypass' ignored: the bypass cannot be recorded" in output
    assert f"{pushed[:10]}  refs/heads/unrecorded  glass.env:1  AWS_CLIENT_ID" in output
    assert "UNCHECKED" not in output
    assert server.refs() == before


def test_push_option_is_no_bypass_unless_the_administrator_names_it(server: Server) -> None:
    server.bare.git("config", "receive.advertisePushOptions", "true")
    commit(server, "glass.env", f"A={aws_key('no-glass')}\n")
    code, output = server.push("-o", "spillguard-bypass", "HEAD:refs/heads/no-break-glass")
    assert code != 0
    assert "glass.env:1" in output
    assert "refs/heads/no-break-glass" not in server.refs()


def test_utf16_text_is_judged_not_skipped_as_binary(server: Server) -> None:
    before = server.refs()
    key = aws_key("utf-16")
    server.work.write("win.ini", f"[aws]\r\nid = {key}\r\n".encode("utf-16"))
    tip = server.work.commit("wide")
    code, output = server.push("HEAD:refs/heads/wide")
    assert code != 0
    assert f"blocking  {tip[:10]}  refs/heads/wide  win.ini:2  AWS_CLIENT_ID  AKIA****" in output
    assert server.refs() == before


def test_a_tab_in_a_path_is_shown_as_an_escape(server: Server) -> None:
    tip = commit(server, "conf\tprod.env", f"AWS_ID={aws_key('tab')}\n")
    code, output = server.push("HEAD:refs/heads/tab")
    assert code != 0
    assert f"blocking  {tip[:10]}  refs/heads/tab  conf\\x09prod.env:1  AWS_CLIENT_ID" in output


def test_a_repository_attribute_file_and_diff_drivers_change_no_verdict(server: Server) -> None:
    """The push is diffed by git, from the quarantine, whatever the server repository's
    ``info/attributes`` and diff drivers say (binary, a textconv that hides every line,
    an external diff): the verdict and its findings are the same."""
    key = aws_key("both-paths")
    work = server.work
    work.write("a.py", f"a = 1\nkey = '{key}'\n")
    work.write("wide.ini", f"[aws]\r\nid = {key}\r\n".encode("utf-16"))
    work.write("blob.bin", b"\0" + key.encode())
    work.commit("kinds")
    work.git("mv", "a.py", "b.py")
    work.write("b.py", (work.path / "b.py").read_text() + f"more = '{key}'\n")
    work.write("conf\tprod.env", f"ID={key}\n")
    work.commit("rename and a quoted path")
    work.git("checkout", "-q", "-b", "both-side", "HEAD~1")
    work.write("side.env", f"S={key}\n")
    work.commit("side")
    work.git("checkout", "-q", "-")
    work.git("merge", "-q", "--no-edit", "both-side")
    before = server.refs()
    code, fast = server.push("HEAD:refs/heads/both-paths")
    attributes = server.bare.path / "info" / "attributes"
    attributes.parent.mkdir(exist_ok=True)
    attributes.write_text("* -diff -text diff=hide\n")
    drivers = {"diff.hide.textconv": "sh -c 'echo hidden'", "diff.hide.command": "true"}
    for key, value in drivers.items():
        server.bare.git("config", key, value)
    try:
        simple_code, simple = server.push("HEAD:refs/heads/both-paths")
    finally:
        attributes.unlink()
        for key in drivers:
            server.bare.git("config", "--unset", key)
    assert (code, simple_code) == (1, 1)
    assert server.refs() == before

    def findings(output: str) -> list[str]:
        return sorted(line for line in output.splitlines() if "blocking  " in line)

    assert findings(fast) == findings(simple)
    shown = " ".join(findings(fast))
    for where in ("a.py:2", "wide.ini:2", "b.py:3", "conf\\x09prod.env:1", "side.env:1"):
        assert where in shown


def test_a_break_glass_option_the_pusher_does_not_give_bypasses_nothing(server: Server) -> None:
    """With ``bypass_push_option`` set, a push without ``-o`` is judged as any other."""
    server.admin('bypass_push_option = "spillguard-bypass"\n')
    server.bare.git("config", "receive.advertisePushOptions", "true")
    commit(server, "glass.env", f"A={aws_key('not-given')}\n")
    code, output = server.push("HEAD:refs/heads/no-option")
    assert code == 1, output
    assert "glass.env:1  AWS_CLIENT_ID" in output
    assert "UNCHECKED" not in output
    assert "refs/heads/no-option" not in server.refs()


def test_the_last_commit_within_the_cap_is_judged(server: Server) -> None:
    """``max_commits = 1``: the one commit of a push is within the cap, and judged."""
    server.admin("max_commits = 1\n")
    commit(server, "cap.env", f"A={aws_key('within-cap')}\n")
    code, output = server.push("HEAD:refs/heads/within-cap")
    assert code == 1, output
    assert "cap.env:1  AWS_CLIENT_ID" in output


def test_every_annotated_tag_of_a_push_and_the_tag_it_names_are_judged(server: Server) -> None:
    """Two annotated tags in one push, one of them a tag of a tag: each message is
    judged, the inner tag's too."""
    work = server.work
    tip = commit(server, "notes.txt", "tagged\n")
    work.git("tag", "-a", "-m", f"first {aws_key('first-tag')}", "first-tag", tip)
    work.git("tag", "-a", "-m", f"inner {aws_key('inner-tag')}", "inner-tag", tip)
    work.git("tag", "-a", "-m", "outer", "outer-tag", "inner-tag")
    work.git("tag", "-d", "inner-tag")  # only the outer tag names the inner one
    code, output = server.push("refs/tags/first-tag", "refs/tags/outer-tag")
    assert code == 1, output
    assert "refs/tags/first-tag  <tag message>:1  AWS_CLIENT_ID" in output
    assert "refs/tags/outer-tag  <tag message>:1  AWS_CLIENT_ID" in output
    for name in ("first-tag", "outer-tag"):
        work.git("tag", "-d", name)


def test_a_file_name_with_a_newline_cannot_forge_a_line_of_the_verdict(server: Server) -> None:
    forged = "a.env\nspillguard: push accepted: no secrets found"
    commit(server, forged, f"A={aws_key('forged')}\n")
    code, output = server.push("HEAD:refs/heads/forged")
    assert code == 1, output
    assert "a.env\\x0aspillguard: push accepted: no secrets found:1" in output
    assert "\nremote: spillguard: push accepted" not in output


def test_a_push_over_the_cap_is_incomplete_whatever_info_attributes_says(
    server: Server,
) -> None:
    """The commits past ``max_commits`` leave the push incomplete where ``info/attributes``
    exists too (it once had pre-receive read with libgit2, which took such a push as
    complete)."""
    server.admin("max_commits = 1\n")
    attributes = server.bare.path / "info" / "attributes"
    attributes.parent.mkdir(exist_ok=True)
    attributes.write_text("*.bin binary\n")
    try:
        commit(server, "1.txt", "one\n")
        commit(server, "2.txt", "two\n")
        code, output = server.push("HEAD:refs/heads/libgit2-cap")
    finally:
        attributes.unlink()
    assert code != 0, output
    assert "push rejected by policy (on_error = reject): the push brings more than 1" in output
    assert "refs/heads/libgit2-cap" not in server.refs()
