"""The server app's own ``soteri-security.yml``: read wherever ``.spillguard.toml`` is read."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from spillguard.cli import main
from testing.gitrepo import GitRepo
from testing.server import Server, install_hook
from testing.tokens import expand

AWS = expand("AKIA{rand:A2:16}", "server-yaml")
ITK = expand("itk_{rand:Aa0:32}", "server-yaml")
FILES = {
    "app/settings.py": f"aws = '{AWS}'\n",
    "app/token.txt": f"token {ITK}\n",
    "tests/fixtures/keys.txt": f"{AWS}\n",
}
#: Every key the server app reads, with its meaning: only RSA_PRIVATE_KEY of the
#: built-in rules, the fixtures allowlisted, and a custom rule (a Java regexp).
SERVER_FILE = """\
# the server app's per-repository file
inherit_builtin_rules: false
inherit_custom_rules: true
rules:
  - RSA_PRIVATE_KEY
custom_rules:
  INTERNAL_TOKEN: 'itk_\\p{Alnum}{32}'
allowlist_paths:
  - 'tests/fixtures/.*'
"""


def scan(repo: GitRepo, capsys) -> tuple[int, dict, str]:
    code = main(["scan", "--tree", "HEAD", "--repo", str(repo.path), "--format", "json"])
    captured = capsys.readouterr()
    return code, json.loads(captured.out or "{}"), captured.err


@pytest.fixture
def leaky(repo: GitRepo) -> GitRepo:
    for path, content in FILES.items():
        repo.write(path, content)
    return repo


def test_every_key_of_the_yaml_file_has_its_meaning(leaky: GitRepo, capsys) -> None:
    leaky.write("soteri-security.yml", SERVER_FILE)
    leaky.commit("files")
    code, report, _ = scan(leaky, capsys)
    assert code == 1
    assert [(f["rule"], f["path"]) for f in report["findings"]] == [
        ("INTERNAL_TOKEN", "app/token.txt")
    ]
    assert main(["rules", "--repo", str(leaky.path), "--format", "json"]) == 0
    rules = {rule["name"]: rule for rule in json.loads(capsys.readouterr().out)["rules"]}
    assert rules["RSA_PRIVATE_KEY"]["enabled"]
    assert not rules["AWS_CLIENT_ID"]["enabled"]
    assert rules["INTERNAL_TOKEN"]["source"] == str(leaky.path / "soteri-security.yml")


def test_the_sample_yaml_file_loads(leaky: GitRepo, capsys) -> None:
    sample = Path(__file__).parents[1] / "sample-config" / "soteri-security.yml"
    leaky.write("soteri-security.yml", sample.read_text(encoding="utf-8"))
    leaky.commit("files")
    code, report, _ = scan(leaky, capsys)
    assert (code, sorted(f["rule"] for f in report["findings"])) == (
        1,
        ["AWS_CLIENT_ID", "INTERNAL_TOKEN"],
    )


def test_yaml_allowlist_paths_let_a_fixture_through(leaky: GitRepo, capsys) -> None:
    leaky.write("app/settings.py", "nothing here\n")
    leaky.write("soteri-security.yml", "allowlist_paths: ['tests/fixtures/.*', 'app/token.txt']\n")
    leaky.commit("files")
    code, report, _ = scan(leaky, capsys)
    assert (code, report["findings"]) == (0, [])


def test_with_both_files_the_toml_file_wins_with_a_warning(leaky: GitRepo, capsys) -> None:
    leaky.write("soteri-security.yml", "allowlist_paths: ['.*']\n")
    leaky.write(".spillguard.toml", "allowlist_paths = ['tests/.*', 'app/token.txt']\n")
    leaky.commit("files")
    code, report, err = scan(leaky, capsys)
    assert code == 1
    assert [f["path"] for f in report["findings"]] == ["app/settings.py"]
    yml, toml = leaky.path / "soteri-security.yml", leaky.path / ".spillguard.toml"
    assert f"warning: {yml} is ignored: {toml} is read instead" in err


@pytest.mark.parametrize(
    ("text", "line", "message"),
    [
        ("rules:\n  - [unclosed\n", 3, "invalid YAML"),
        ("rules: RSA_PRIVATE_KEY\n", 1, "rules must be a list of strings"),
        ("inherit_builtin_rules: false\ndisabled_rules: [X]\n", 2, "unknown key 'disabled_rules'"),
        ("custom_rules:\n  OK: 'ok_[a-z]{9}'\n  BAD: 'x_(y'\n", 3, "custom rule BAD"),
        ("custom_rules: [a]\n", 1, "custom_rules must be a map"),
        ("allowlist_paths: ['(']\n", 1, "allowlist_paths entry '('"),
        ("rules: !!python/object/apply:os.system ['true']\n", 1, "invalid YAML"),
    ],
)
def test_an_error_is_one_line_naming_the_file_and_line(
    repo: GitRepo, capsys, text: str, line: int, message: str
) -> None:
    repo.write("soteri-security.yml", text)
    assert main(["scan", "--files", str(repo.path), "--repo", str(repo.path)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0
    assert f"soteri-security.yml:{line}: " in err
    assert message in err


def test_pre_commit_reads_the_staged_yaml_and_imports_yaml_only_then(repo: GitRepo) -> None:
    def hook_run() -> tuple[int, str]:
        probe = (
            "import sys\nfrom spillguard.cli import main\ncode = main(['hook', 'pre-commit'])\n"
            "print('yaml' in sys.modules, code)\n"
        )
        done = subprocess.run(
            [sys.executable, "-c", probe], cwd=repo.path, capture_output=True, text=True, check=True
        )
        return done.returncode, done.stdout.split("\n")[-2]

    repo.write("README.md", "hello\n")
    repo.commit("base")
    repo.write("tests/fixtures/keys.txt", f"{AWS}\n")
    repo.git("add", "-A")
    assert hook_run() == (0, "False 1")
    repo.write("soteri-security.yml", "allowlist_paths: ['tests/fixtures/.*']\n")
    assert hook_run() == (0, "False 1")  # not staged: not read
    repo.git("add", "soteri-security.yml")
    assert hook_run() == (0, "True 0")


def test_trusted_on_the_server_from_the_default_branch_only(tmp_path: Path) -> None:
    server = Server(tmp_path)
    work = server.work
    work.write("soteri-security.yml", "allowlist_paths: ['fixtures/.*']\n")
    work.commit("the server's file")
    assert server.push("main")[0] == 0
    install_hook(server.bare.path)
    work.write("fixtures/key.txt", f"{AWS}\n")
    work.commit("a fixture")
    code, output = server.push("main")
    assert code != 0  # the administrator does not trust repository files yet
    server.admin("repository_config = true\n")
    work.git("checkout", "-q", "-b", "loosen")
    work.write("soteri-security.yml", "allowlist_paths: ['.*']\n")
    work.write("app.py", f"key = '{AWS}'\n")
    work.commit("loosens the file and adds a key")
    code, output = server.push("loosen")
    assert code != 0, output  # judged by main's file, not the pushed one
    assert "app.py" in output
    assert "fixtures/key.txt" not in output  # main's file allowlists it
    work.git("checkout", "-q", "main")
    assert server.push("main")[0] == 0
