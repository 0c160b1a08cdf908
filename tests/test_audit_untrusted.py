"""spillguard audit against an estate that lies: names that collide, URLs that climb out
of the clone folder or carry credentials, links out of the tree, escape sequences,
two audits at once. Real repositories, real fetches (file:// and dumb HTTP on
127.0.0.1), real SQLite files."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import threading
import zipfile
from pathlib import Path

import pytest

from spillguard.audit.locations import CloneUrl, LocationError, mirror_folder, parse_clone_url
from spillguard.audit.state import open_state
from spillguard.cli import main
from testing.estate import (
    AWS_SECRET,
    START,
    Commit,
    by_branch,
    by_repository,
    repository,
    run_audit,
    write_commits,
)
from testing.githttp import publish, serve_folder
from testing.tokens import expand

# -- identity: the whole location ---------------------------------------------------------


@pytest.mark.parametrize(
    ("url", "identity", "name"),
    [
        ("https://scm.example.com/team/app.git", "scm.example.com/team/app.git", "team/app"),
        ("https://SCM.example.com:8443/team/app/", "scm.example.com:8443/team/app", "team/app"),
        ("ssh://git@scm.example.com/team/app.git", "scm.example.com/team/app.git", "team/app"),
        ("git@scm.example.com:team/app.git", "scm.example.com/team/app.git", "team/app"),
        ("https://h/grp/../r2.git", "h/r2.git", "h/r2"),
        ("https://h/a/./b//c.git", "h/a/b/c.git", "b/c"),
        ("file:///srv/git/grp/../r2.git", "file:///srv/git/r2.git", "git/r2"),
        ("https://h/app.git", "h/app.git", "h/app"),
    ],
)
def test_a_clone_url_is_known_by_its_host_and_whole_path(
    url: str, identity: str, name: str
) -> None:
    parsed = parse_clone_url(url)
    assert (parsed.identity, f"{parsed.project}/{parsed.name}") == (identity, name)


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("https://ada:s3cr3t-T0KEN@h/team/app.git", "https://****@h/team/app.git"),
        ("https://ghp_T0KENT0KEN@h/team/app.git", "https://****@h/team/app.git"),
        ("ssh://ada:s3cr3t-T0KEN@h/team/app.git", "ssh://****@h/team/app.git"),
        ("ssh://git@h/team/app.git", "ssh://git@h/team/app.git"),
        ("https://h/team/app.git?private_token=T0KENT0KEN", "https://h/team/app.git?****"),
    ],
)
def test_credentials_of_a_clone_url_are_never_shown(url: str, shown: str) -> None:
    parsed = parse_clone_url(url)
    assert parsed.shown == shown
    assert parsed.identity == parse_clone_url(shown).identity
    assert "T0KEN" not in repr(parsed)


@pytest.mark.parametrize(
    "url", ["ext::sh -c touch% /tmp/x://", "ftp://h/x.git", "https://h/", "https://h:99999/x"]
)
def test_a_url_that_cannot_be_audited_says_why(url: str) -> None:
    with pytest.raises(LocationError):
        parse_clone_url(url)


def test_mirror_folders_stay_inside_the_clone_folder_and_never_coincide(tmp_path: Path) -> None:
    urls = [
        "https://h1/team/app", "https://h2/team/app", "https://h1/team/app.git",
        "file:///x/grp/../../../../r2.git", "https://h/%2e%2e/%2e%2e/x", "git@h:../../x.git",
    ]  # fmt: skip
    folders = {mirror_folder(parse_clone_url(url), tmp_path / "clones") for url in urls}
    assert len(folders) == len(urls)
    for folder in folders:
        assert (tmp_path / "clones") in folder.parents
        assert ".." not in folder.parts


# -- collisions: an error, never a merge ---------------------------------------------------


def _urls(tmp_path: Path, *lines: str) -> str:
    listed = tmp_path / "urls.txt"
    listed.write_text("".join(f"{line}\n" for line in lines))
    return str(listed)


def test_two_repositories_with_one_name_are_refused_never_reported_clean(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # team/app on two "hosts", and team/app beside team/app.git: the second and third
    # hold a blocking secret. One mirror and one state key for all three would report
    # the first's clean history for every one of them.
    first = repository(tmp_path / "h1" / "team" / "app.git", "first", secret=False)
    second = repository(tmp_path / "h2" / "team" / "app.git", "second", secret=True)
    third = repository(tmp_path / "h1" / "team" / "app", "third", secret=True)
    urls = _urls(tmp_path, first.as_uri(), second.as_uri(), third.as_uri())
    state = str(tmp_path / "s.sqlite")
    for _ in range(2):  # and on every run
        code, tree, err = run_audit(capsys, urls, "--state", state)
        assert code == 3
        shown = by_repository(tree)["team/app"]
        assert [repo["state"] for repo in shown] == ["failed"] * 3
        assert err.count("name collision") == 3, err
        assert f"{second.as_uri()} and {first.as_uri()}, {third.as_uri()}" in err
    assert not any((tmp_path / "s.sqlite.clones").rglob("HEAD"))  # none was fetched


def test_one_repository_given_twice_is_audited_once(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    app = repository(tmp_path / "team" / "app.git", "once", secret=True)
    (tmp_path / "grp").mkdir()
    again = f"file://{tmp_path}/grp/../team/app.git"
    code, tree, _ = run_audit(capsys, _urls(tmp_path, app.as_uri(), again), "--state",
                              str(tmp_path / "s.sqlite"))  # fmt: skip
    assert code == 1
    assert tree["summary"]["repositories"] == 1


def test_a_mirror_is_fetched_only_when_spillguard_made_it_for_that_url(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    app = repository(tmp_path / "team" / "app.git", "app", secret=False)
    other = repository(tmp_path / "team" / "other.git", "other", secret=True)
    urls, state = _urls(tmp_path, app.as_uri()), str(tmp_path / "s.sqlite")
    assert run_audit(capsys, urls, "--state", state)[0] == 0
    folder = mirror_folder(parse_clone_url(app.as_uri()), tmp_path / "s.sqlite.clones")
    assert folder.is_dir()

    # Its origin turned to another repository: not fetched, said, never "clean".
    subprocess.run(["git", "--git-dir", str(folder), "config", "remote.origin.url",
                    other.as_uri()], check=True)  # fmt: skip
    code, tree, err = run_audit(capsys, urls, "--state", state)
    assert code == 3
    assert f"mirrors {other.as_uri()}, not this URL; not fetched" in err
    assert by_repository(tree)["team/app"][0]["state"] == "failed"

    # A repository spillguard did not make, where the mirror would go: left alone.
    subprocess.run(["rm", "-rf", str(folder)], check=True)
    subprocess.run(["git", "clone", "-q", "--bare", other.as_uri(), str(folder)], check=True)
    subprocess.run(["git", "--git-dir", str(folder), "branch", "precious", "main"], check=True)
    code, _, err = run_audit(capsys, urls, "--state", state)
    assert code == 3
    assert "is not a mirror spillguard made for this repository; not fetched" in err
    branches = subprocess.run(["git", "--git-dir", str(folder), "branch"], capture_output=True,
                              text=True, check=True).stdout  # fmt: skip
    assert "precious" in branches


# -- path traversal from the URL file ------------------------------------------------------


def test_a_url_climbing_out_of_the_clone_folder_stays_in_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``.../grp/../r2.git`` once made the mirror ``CLONES/../r2.git``: a fetch with
    --prune into whatever repository sat there, and ``EXPORT/../r2.csv``."""
    target = repository(tmp_path / "srv" / "r2.git", "r2", secret=True)
    (tmp_path / "srv" / "grp").mkdir()
    work = tmp_path / "audit"
    victim = work / "r2.git"  # beside the clone folder: someone else's repository
    subprocess.run(["git", "clone", "-q", "--bare", target.as_uri(), str(victim)], check=True)
    subprocess.run(["git", "--git-dir", str(victim), "branch", "precious", "main"], check=True)
    before = sorted(path.name for path in work.iterdir())
    url = f"file://{tmp_path}/srv/grp/../r2.git"
    code, tree, _ = run_audit(
        capsys, _urls(tmp_path, url), "--state", str(work / "s.sqlite"),
        "--export", str(work / "exports"), "--export-zip", str(work / "all.zip"),
    )  # fmt: skip
    assert code == 1  # the secret of r2, fetched into a mirror of its own
    assert by_branch(tree)["srv/r2:main"]["state"] == "vulnerable"
    branches = subprocess.run(["git", "--git-dir", str(victim), "branch"], capture_output=True,
                              text=True, check=True).stdout  # fmt: skip
    assert "precious" in branches
    made = sorted(path.name for path in work.iterdir())
    assert sorted({*before, "s.sqlite", "s.sqlite.clones", "exports", "all.zip"}) == sorted(
        name for name in made if not name.startswith("s.sqlite-") and name != "s.sqlite.lock"
    )
    assert (work / "exports" / "srv" / "r2.csv").is_file()
    with zipfile.ZipFile(work / "all.zip") as archive:
        assert archive.namelist() == ["srv/r2.csv"]


def test_names_from_the_estate_never_climb_out_of_an_export(tmp_path: Path) -> None:
    from spillguard.audit.exports import zip_entry
    from spillguard.audit.model import Repository

    for project, name in ((".", ".."), ("..", "x"), ("", "a/../../b"), ("/etc", "passwd")):
        entry = zip_entry(Repository(project=project, name=name, path="", identity=name))
        parts = entry.split("/")
        assert len(parts) == 2, entry
        assert not entry.startswith("/")
        assert ".." not in parts
        assert "" not in parts


# -- credentials in clone URLs -------------------------------------------------------------

TOKEN = expand("glpat-{rand:Aa0:20}", "clone-url-token")


def _everything_under(folder: Path) -> bytes:
    return b"".join(path.read_bytes() for path in sorted(folder.rglob("*")) if path.is_file())


def test_credentials_in_a_clone_url_are_used_but_never_shown_or_stored(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    served = tmp_path / "served"
    app = repository(served / "team" / "app.git", "app", secret=True)
    publish(app)
    work = tmp_path / "audit"
    work.mkdir()
    with serve_folder(served) as (base, _):
        port = base.rsplit(":", 1)[1]
        url = f"http://ada:{TOKEN}@127.0.0.1:{port}/team/app.git"
        gone = f"http://ada:{TOKEN}%2Fx@127.0.0.1:{port}/team/gone.git"
        code, tree, err = run_audit(
            capsys, _urls(tmp_path, url, gone), "--state", str(work / "s.sqlite"),
            "--html", str(work / "audit.html"), "--export-zip", str(work / "all.zip"),
        )  # fmt: skip
    assert code == 1
    assert by_branch(tree)["team/app:main"]["state"] == "vulnerable"
    assert f"cannot fetch http://****@127.0.0.1:{port}/team/gone.git: " in err
    import json

    shown = err + json.dumps(tree)
    stored = _everything_under(work)
    for secret in (TOKEN, f"{TOKEN}/x", f"{TOKEN}%2Fx"):
        assert secret not in shown
        assert secret.encode() not in stored  # state, HTML, zip, and the mirror itself


# -- escape sequences -----------------------------------------------------------------------


def test_escape_sequences_in_names_and_urls_reach_the_terminal_as_text(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    estate = tmp_path / "estate"
    (estate / "team" / "\x1b]0;owned\x07x.git").mkdir(parents=True)  # no repository: failed
    listed = _urls(tmp_path, "https://127.0.0.1:1/team/\x1b[2Jgone.git", str(estate / "team"))
    code, _, err = run_audit(capsys, str(estate), listed, "--state", str(tmp_path / "s.sqlite"))
    assert code == 3
    assert "\x1b" not in err
    assert "\x07" not in err
    assert "\\x1b]0;owned\\x07x" in err
    assert "\\x1b[2Jgone" in err


# -- two audits at once ------------------------------------------------------------------------


def test_a_second_audit_of_the_same_state_says_it_is_busy(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    served = tmp_path / "served"
    publish(repository(served / "team" / "app.git", "busy", secret=False))
    state = str(tmp_path / "s.sqlite")
    hold = threading.Event()
    with serve_folder(served, hold=hold) as (base, requested):
        urls = _urls(tmp_path, f"{base}/team/app.git")
        command = [sys.executable, "-m", "spillguard", "audit", urls, "--state", state, "-q"]
        first = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        assert requested.wait(60)  # the first audit is fetching, its state held
        second = subprocess.run(command, capture_output=True, text=True, check=False)
        hold.set()
        first.communicate(timeout=120)
    assert second.returncode == 3
    assert second.stderr == (
        f"spillguard: error: --state {state}: another audit is using it ({state}.lock is "
        "locked); run this one when it is done\n"
    )
    assert first.returncode == 0


def test_the_schema_of_a_new_state_is_made_once_whoever_comes_second(tmp_path: Path) -> None:
    """Another process creating the schema while this one opens the new state: this one
    waits for it and uses that schema (it used to die: table meta already exists)."""
    from spillguard.audit.state import _SCHEMA, SCHEMA_VERSION

    path = str(tmp_path / "s.sqlite")
    other = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    other.execute("PRAGMA journal_mode=WAL")
    other.execute("BEGIN IMMEDIATE")
    for statement in filter(str.strip, _SCHEMA.split(";")):
        other.execute(statement)
    other.execute("INSERT INTO meta VALUES ('schema_version', ?)", (SCHEMA_VERSION,))
    threading.Timer(0.5, other.execute, ("COMMIT",)).start()
    connection, note = open_state(path)
    assert note is None
    assert connection.execute("SELECT value FROM meta").fetchall() == [(str(SCHEMA_VERSION),)]
    connection.close()
    other.close()


def test_a_state_keyed_by_name_is_judged_anew_once(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "old.sqlite"
    with sqlite3.connect(path) as old:
        old.executescript(
            "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);"
            "INSERT INTO meta VALUES ('schema_version', '1');"
            "CREATE TABLE repositories (key TEXT PRIMARY KEY, project TEXT NOT NULL, "
            "name TEXT NOT NULL, path TEXT NOT NULL, default_branch TEXT, error TEXT, "
            "audited_at TEXT NOT NULL);"
            "INSERT INTO repositories VALUES ('team/app', 'team', 'app', 'x', 'main', NULL, '');"
            "CREATE TABLE branches (repository TEXT, name TEXT, last_commit TEXT, "
            "fingerprint TEXT, commits INTEGER, scanned_at TEXT);"
            "CREATE TABLE findings (repository TEXT, branch TEXT, rule TEXT, blocking INTEGER,"
            " path TEXT, line INTEGER, commit_id TEXT, author TEXT, date TEXT, text TEXT, "
            "match_text TEXT, fingerprint TEXT, allowlisted INTEGER, reviewed INTEGER);"
        )
    old.close()
    app = repository(tmp_path / "team" / "app.git", "old", secret=False)
    code, tree, err = run_audit(capsys, str(app), "--state", str(path))
    assert code == 0
    assert "every repository is judged anew this once" in err
    assert by_branch(tree)["team/app:main"]["reason"] == "new"
    assert run_audit(capsys, str(app), "--state", str(path))[2] == ""


# -- links out of the tree; reports written whole, never through a link ----------------------


def test_links_out_of_the_estate_are_not_followed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    estate = tmp_path / "estate"
    repository(estate / "alpha" / "app.git", "app", secret=False)
    outside = repository(tmp_path / "elsewhere" / "secret.git", "outside", secret=True)
    (estate / "alpha" / "linked.git").symlink_to(outside)
    (estate / "everything").symlink_to("/")
    (estate / "alpha" / "alias.git").symlink_to(estate / "alpha" / "app.git")
    (estate / "again").symlink_to(estate / "alpha")  # a project folder's alias, sorted first
    code, tree, err = run_audit(capsys, str(estate), "--state", str(tmp_path / "s.sqlite"))
    assert code == 3
    shown = {name: [repo["state"] for repo in repos] for name, repos in by_repository(tree).items()}
    assert shown == {
        "alpha/app": ["clean"],
        "alpha/linked": ["failed"],
        "estate/everything": ["failed"],
    }
    assert f"alpha/linked: a symbolic link out of {estate} (to {outside}); not followed" in err
    assert f"estate/everything: a symbolic link out of {estate} (to /); not followed" in err


def test_a_mirror_follows_the_remote_default_branch(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A remote that renames its default branch: the mirror's HEAD follows it, where it
    would name a branch --prune removed (an empty repository, reported clean)."""
    app = repository(tmp_path / "team" / "app.git", "renamed", secret=False)
    urls, state = _urls(tmp_path, app.as_uri()), str(tmp_path / "s.sqlite")
    assert run_audit(capsys, urls, "--state", state)[0] == 0
    write_commits(
        app, [Commit("main", "settings.py", expand(AWS_SECRET, "renamed") + "\n", START)],
        existing=True,
    )  # fmt: skip
    subprocess.run(["git", "--git-dir", str(app), "branch", "-m", "main", "trunk"], check=True)
    code, tree, _ = run_audit(capsys, urls, "--state", state)
    assert code == 1
    assert by_branch(tree)["team/app:trunk"]["state"] == "vulnerable"


def test_reports_replace_a_link_instead_of_writing_through_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    app = repository(tmp_path / "team" / "app.git", "app", secret=True)
    victim = tmp_path / "victim.txt"
    victim.write_text("precious\n")
    page = tmp_path / "audit.html"
    page.symlink_to(victim)
    exports = tmp_path / "exports"
    (exports / "team").mkdir(parents=True)
    (exports / "team" / "app.csv").symlink_to(victim)
    state = str(tmp_path / "s.sqlite")
    code, _, _ = run_audit(capsys, str(app), "--state", state, "--html", str(page),
                           "--export", str(exports))  # fmt: skip
    assert code == 1
    assert victim.read_text() == "precious\n"
    assert not page.is_symlink()
    assert "<!DOCTYPE html>" in page.read_text()
    assert not (exports / "team" / "app.csv").is_symlink()

    # A project folder that leads out of the export folder: refused, nothing written there.
    (exports / "team" / "app.csv").unlink()
    (exports / "team").rmdir()
    (exports / "team").symlink_to(tmp_path / "elsewhere", target_is_directory=True)
    (tmp_path / "elsewhere").mkdir()
    assert main(["audit", str(app), "--state", state, "--export", str(exports)]) == 2
    assert "leads out of" in capsys.readouterr().err
    assert list((tmp_path / "elsewhere").iterdir()) == []


# -- why a fetch failed --------------------------------------------------------------------------


def test_an_unreachable_clone_url_says_why_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    gone = (tmp_path / "team" / "gone.git").as_uri()
    code, _, err = run_audit(
        capsys, _urls(tmp_path, gone, "http://127.0.0.1:1/team/closed.git"),
        "--state", str(tmp_path / "s.sqlite"),
    )  # fmt: skip
    assert code == 3
    lines = err.splitlines()
    assert len(lines) == 2
    assert lines[0].startswith(f"spillguard: audit: team/gone: cannot fetch {gone}: ")
    assert "does not appear to be a git repository" in lines[0]
    assert "Failed to connect to 127.0.0.1 port 1" in lines[1]
    assert "the repository exists" not in err


def test_credentials_scrubbed_from_what_git_says() -> None:
    from spillguard.audit.locations import scrubbed

    url: CloneUrl = parse_clone_url(f"https://ada:{TOKEN}%21@h/x.git")
    said = f"fatal: unable to access 'https://ada:{TOKEN}!@h/x.git/': {TOKEN}%21 refused"
    assert TOKEN not in scrubbed(said, url)


# -- a per-repository time budget --------------------------------------------------------------


def test_a_repository_over_its_time_budget_fails_and_is_judged_again(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Exhausted, the budget is said, never a silent "clean", and nothing is recorded."""
    app = repository(tmp_path / "team" / "app.git", "budget", secret=True)
    state = str(tmp_path / "s.sqlite")
    code, tree, err = run_audit(capsys, str(app), "--state", state, "--repository-budget", "1e-9")
    assert code == 3
    assert by_repository(tree)["team/app"][0]["state"] == "failed"
    assert "team/app: over its time budget of 1e-09 s (--repository-budget): judging stopped" in err
    code, tree, _ = run_audit(capsys, str(app), "--state", state)
    assert code == 1
    assert by_branch(tree)["team/app:main"]["reason"] == "new"


def _running_with(text: str) -> list[str]:
    """The live processes (not zombies) whose command line holds ``text``."""
    found = []
    for proc in Path("/proc").iterdir():
        try:
            cmdline = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode()
            state = (proc / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            continue  # not a process, or ended meanwhile
        if text in cmdline and state != "Z":
            found.append(cmdline)
    return found


def test_a_server_that_answers_slowly_or_never_costs_one_repository_budget(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A fetch is bounded by the repository's budget as a whole, not per read: the
    repository is failed with why, the others audited, nothing recorded for it, and no
    git (nor the ``git remote-http`` it started) left waiting on the server."""
    served = tmp_path / "served"
    publish(repository(served / "team" / "slow.git", "slow", secret=True))
    publish(repository(served / "team" / "never.git", "never", secret=True))
    local = repository(tmp_path / "local" / "app.git", "local", secret=True)
    state = str(tmp_path / "s.sqlite")
    # The rules compiled once (a cold cache costs seconds), outside the budget below.
    assert main(["audit", str(local), "--state", str(tmp_path / "warm.sqlite"), "-q"]) == 1
    capsys.readouterr()
    hold = threading.Event()
    slowly = serve_folder(served, delay=0.5)  # a dumb fetch asks for a dozen files
    with slowly as (slow, _), serve_folder(served, hold=hold) as (never, _):
        urls = _urls(tmp_path, f"{slow}/team/slow.git", f"{never}/team/never.git")
        code, tree, err = run_audit(
            capsys, urls, str(local), "--state", state, "--repository-budget", "2"
        )
        left = _running_with(slow) + _running_with(never)
        hold.set()
        assert left == []
        assert code == 1  # the local repository's blocking secret
        assert by_branch(tree)["local/app:main"]["state"] == "vulnerable"
        for name, base in (("slow", slow), ("never", never)):
            assert by_repository(tree)[f"team/{name}"][0]["state"] == "failed"
            assert (
                f"spillguard: audit: team/{name}: cannot fetch {base}/team/{name}.git: not done "
                "within its time budget of 2 s (--repository-budget)\n"
            ) in err
            assert list(Path(f"{state}.clones").rglob(f"*{name}*")) == []  # no half mirror
        assert len(err.splitlines()) == 2
        # Nothing judged was kept for it: once the server answers, it is judged anew.
        code, tree, _ = run_audit(
            capsys, _urls(tmp_path, f"{never}/team/never.git"), "--state", state
        )
    assert code == 1
    assert by_branch(tree)["team/never:main"]["reason"] == "new"
