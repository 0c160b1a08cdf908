"""``spillguard config check``, bad configuration through the real command line, the
sample files and the configuration reference's table of keys."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from spillguard.cli import main
from spillguard.configuration import schema
from spillguard.configuration.config import load_layer_file
from testing.gitrepo import GitRepo
from testing.tokens import expand

if TYPE_CHECKING:
    from spillguard.configuration.config import LayerRole

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "sample-config"
AWS_KEY = expand("AKIA{rand:A2:16}", "config-check")


@pytest.fixture
def own_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The user's own file, in a private XDG_CONFIG_HOME (not yet written)."""
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    path = tmp_path / "xdg" / "spillguard" / "config.toml"
    path.parent.mkdir(parents=True)
    return path


def check(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(["config", "check", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_text_shows_layers_rules_settings_and_their_sources(
    repo: GitRepo, own_file: Path, capsys
) -> None:
    own_file.write_text(
        "disabled_rules = ['AWS_CLIENT_ID']\nlocked_rules = ['GENERIC_PASSWORD']\n"
        "max_file_size = 4096\n"
    )
    repo.write(".spillguard.toml", "max_file_size = 2048\ndisabled_rules = ['GENERIC_PASSWORD']\n")
    code, out, err = check(capsys, "--repo", str(repo.path), "--include-allowlisted")
    assert (code, err) == (0, "")
    repository = str(repo.path.resolve() / ".spillguard.toml")
    assert f"  global      {own_file}\n" in out
    assert f"  repository  {repository}\n" in out
    assert "  flags       command line\n" in out
    assert f"  reviewed    {repo.path.resolve() / '.spillguard-reviewed.toml'} (not found)" in out
    assert re.search(
        rf"AWS_CLIENT_ID +builtin +disabled +blocking +{re.escape(str(own_file))}", out
    )
    assert re.search(
        rf"GENERIC_PASSWORD +builtin +enabled +blocking +{re.escape(str(own_file))} +locked", out
    )
    assert f"  max_file_size = 4096  ({own_file})\n" in out
    assert f"notice: {repository}: max_file_size is ignored in a repository's file" in out
    assert '  hook.mode = "block"  (default)\n' in out
    assert f"notice: {repository}: rule GENERIC_PASSWORD is locked" in out
    assert out.endswith("configuration OK\n")


def test_json_is_a_document_for_tools(repo: GitRepo, own_file: Path, capsys) -> None:
    repo.write(".spillguard.toml", "[custom_rules]\nMY_TOKEN = 'myt_[a-z0-9]{20}'\n")
    code, out, _ = check(capsys, "--repo", str(repo.path), "--format", "json")
    document = json.loads(out)
    assert code == 0
    assert [(layer["role"], layer["found"]) for layer in document["layers"]] == [
        ("builtin", True),
        ("global", False),
        ("repository", True),
        ("reviewed", False),
    ]
    assert {"role": "global", "path": str(own_file), "found": False} in document["searched"]
    (rule,) = [rule for rule in document["rules"] if rule["name"] == "MY_TOKEN"]
    assert rule == {
        "name": "MY_TOKEN",
        "kind": "custom",
        "enabled": True,
        "blocking": True,
        "source": str(repo.path.resolve() / ".spillguard.toml"),
        "description": "",
    }
    assert document["settings"]["max_rule_timeout"] == {"value": 0, "source": "default"}
    assert document["settings"]["generic_password.min_length"]["value"] == 4


BAD = [
    ("max_file_size = 10\n[hook\n", r"invalid TOML: .*\(at line 2, column 6\)"),
    ("inherit_custom_rule = true\n", r"unknown key 'inherit_custom_rule' \(did you mean"),
    ("include_plaintext_in_exports = 'yes'\n", r"must be true or false, not str"),
    ("[custom_rules]\nBROAD = '.+'\n", r"custom rule BROAD: regexp is too broad"),
]


@pytest.mark.parametrize(("text", "pattern"), BAD)
@pytest.mark.parametrize(
    "argv", [("config", "check"), ("scan", "--tree", "HEAD"), ("rules",)], ids=lambda a: a[0]
)
def test_bad_repository_file_exits_2_with_one_line_and_nothing_else(
    repo: GitRepo, capsys, text: str, pattern: str, argv: tuple[str, ...]
) -> None:
    repo.write("a.env", f"K={AWS_KEY}\n")
    repo.commit("leak")
    repo.write(".spillguard.toml", text)
    code = main([*argv, "--repo", str(repo.path)])
    out, err = capsys.readouterr()
    assert code == 2
    assert out == ""  # no report from half a configuration
    assert err.startswith("spillguard: error: ")
    assert err.count("\n") == 1
    assert ".spillguard.toml: " in err
    assert re.search(pattern, err)
    assert "Traceback" not in err


def test_hook_never_runs_with_half_a_configuration(repo: GitRepo, capsys, monkeypatch) -> None:
    repo.write("a.env", f"K={AWS_KEY}\n")
    repo.write(".spillguard.toml", "disabled_rules = ['AWS_CLIENT_ID']\nbogus = 1\n")
    repo.git("add", "-A")
    monkeypatch.chdir(repo.path)
    assert main(["hook", "pre-commit"]) == 2
    assert "unknown key 'bogus'" in capsys.readouterr().err


def test_bare_repository_shows_what_the_next_push_is_judged_by(
    tmp_path: Path, capsys, own_file: Path
) -> None:
    bare = GitRepo(tmp_path / "bare.git", bare=True)
    work = GitRepo(tmp_path / "work")
    work.write(".spillguard.toml", "disabled_rules = ['GENERIC_PASSWORD']\n")
    work.commit("config")
    work.git("push", "-q", str(bare.path), "HEAD:refs/heads/main")
    (bare.path / "spillguard.toml").write_text("repository_config = true\n")
    code, out, _ = check(capsys, "--repo", str(bare.path), "--format", "json")
    document = json.loads(out)
    assert code == 0
    assert [layer["source"] for layer in document["layers"]] == [
        "builtin",
        str(bare.path.resolve() / "spillguard.toml"),
        ".spillguard.toml on refs/heads/main",
    ]
    assert document["settings"]["repository_config"]["value"] is True


# --- the sample files ---------------------------------------------------------------------

SAMPLE_ROLES: dict[str, LayerRole] = {
    "repository.spillguard.toml": "repository",
    "developer.config.toml": "global",
    "administrator.spillguard.toml": "global",
}


def test_every_sample_file_is_listed_and_loads() -> None:
    assert sorted(path.name for path in SAMPLES.glob("*.toml")) == sorted(SAMPLE_ROLES)
    for name, role in SAMPLE_ROLES.items():
        layer = load_layer_file(SAMPLES / name, role=role)
        assert layer.data, name
        assert name in (SAMPLES / "README.md").read_text()


def test_sample_files_together_in_a_repository(repo: GitRepo, own_file: Path, capsys) -> None:
    shutil.copy(SAMPLES / "developer.config.toml", own_file)
    shutil.copy(SAMPLES / "repository.spillguard.toml", repo.path / ".spillguard.toml")
    code, out, _ = check(capsys, "--repo", str(repo.path), "--format", "json")
    document = json.loads(out)
    assert code == 0
    rules = {rule["name"]: rule for rule in document["rules"]}
    assert rules["INTERNAL_TOKEN"]["blocking"] is False
    assert rules["COMPANY_API_TOKEN"]["source"] == str(own_file)
    assert document["settings"]["require_review_reason"]["value"] is True
    assert document["locked_rules"] == ["AWS_SECRET_ACCESS_KEY"]


def test_administrator_sample_in_a_bare_repository(tmp_path: Path, capsys) -> None:
    bare = GitRepo(tmp_path / "bare.git", bare=True)
    admin = SAMPLES / "administrator.spillguard.toml"
    code, out, _ = check(
        capsys, "--repo", str(bare.path), "--config", str(admin), "--format", "json"
    )
    settings = json.loads(out)["settings"]
    assert code == 0
    assert settings["repository_config"] == {"value": True, "source": str(admin)}
    assert settings["on_error"]["value"] == "reject"


# --- docs/configuration.md documents every key ---------------------------------------------


def readme_keys() -> set[str]:
    text = (ROOT / "docs" / "configuration.md").read_text()
    section = text.split("## Keys", 1)[1].split("\n## ", 1)[0]
    return set(re.findall(r"^\| `([a-z_.A-Z]+)` \|", section, flags=re.MULTILINE))


def schema_keys() -> set[str]:
    keys = set(schema.TOP_LEVEL)
    for table, entries in (
        ("hook", schema.HOOK),
        ("generic_password", schema.GENERIC_PASSWORD),
        ("sync", schema.SYNC),
        ("custom_rules.NAME", schema.CUSTOM_RULE),
    ):
        keys.update(f"{table}.{key}" for key in entries)
    return keys - {"hook", "generic_password", "sync"}


def test_readme_table_documents_every_key_and_no_other() -> None:
    assert readme_keys() == schema_keys()


def test_missing_repository_directory_is_a_usage_error(tmp_path: Path, capsys) -> None:
    code, out, err = check(capsys, "--repo", str(tmp_path / "nothere"))
    assert (code, out) == (2, "")
    assert err == f"spillguard: error: --repo {tmp_path / 'nothere'}: not a directory\n"


def test_layers_not_found_are_shown_in_their_place(repo: GitRepo, own_file: Path, capsys) -> None:
    """The heading says lowest first: a missing file is listed where it would apply."""
    repo.write(".spillguard.toml", "max_file_size = 2048\n")
    code, out, _ = check(capsys, "--repo", str(repo.path))
    assert code == 0
    root = repo.path.resolve()
    assert out.startswith(
        "layers (lowest first):\n"
        "  builtin     builtin\n"
        f"  global      {own_file} (not found)\n"
        f"  repository  {root / '.spillguard.toml'}\n"
        f"  reviewed    {root / '.spillguard-reviewed.toml'} (not found)\n"
        "rules: "
    )


def test_rules_and_config_check_show_a_rules_source_alike(
    tmp_path: Path, capsys, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Both absolute, however the directory and the --config file were named."""
    (tmp_path / "plain").mkdir()  # not a git repository
    (tmp_path / "plain" / ".spillguard.toml").write_text("[custom_rules]\nMINE = 'mn_[0-9]{9}'\n")
    (tmp_path / "admin.toml").write_text("[custom_rules]\nADMIN = 'ad_[0-9]{9}'\n")
    monkeypatch.chdir(tmp_path)
    argv = ["--repo", "plain", "--config", "admin.toml", "--format", "json"]
    assert main(["rules", *argv]) == 0
    listed = {rule["name"]: rule["source"] for rule in json.loads(capsys.readouterr().out)["rules"]}
    assert main(["config", "check", *argv]) == 0
    checked = json.loads(capsys.readouterr().out)
    expected = {
        "MINE": str(tmp_path.resolve() / "plain" / ".spillguard.toml"),
        "ADMIN": str(tmp_path.resolve() / "admin.toml"),
    }
    assert {name: listed[name] for name in expected} == expected
    assert {r["name"]: r["source"] for r in checked["rules"] if r["name"] in expected} == expected


def test_a_tab_in_a_sources_path_is_shown_as_an_escape(tmp_path: Path, capsys) -> None:
    """As scan reports show it (\\x09), in rules and config check alike."""
    plain = tmp_path / "odd\tdir"
    plain.mkdir()
    (plain / ".spillguard.toml").write_text("[custom_rules]\nMINE = 'mn_[0-9]{9}'\n")
    shown = str(plain.resolve() / ".spillguard.toml").replace("\t", "\\x09")
    assert main(["rules", "--repo", str(plain)]) == 0
    listed = capsys.readouterr().out
    assert main(["config", "check", "--repo", str(plain)]) == 0
    checked = capsys.readouterr().out
    assert "\t" not in listed + checked
    assert re.search(rf"MINE +custom +enabled +blocking +{re.escape(shown)}\n", listed)
    assert re.search(rf"MINE +custom +enabled +blocking +{re.escape(shown)}\n", checked)
    assert f"  repository  {shown}\n" in checked


def test_a_custom_rule_that_reaches_a_known_java_difference_is_named(
    repo: GitRepo, own_file: Path, capsys
) -> None:
    repo.write(
        ".spillguard.toml",
        "[custom_rules]\nREPEAT_TOKEN = '(?i)rpt_([a-z]{4})_\\1'\n"
        "GREEK_TOKEN = 'grk_\\p{InGreek}{8}'\nPLAIN_TOKEN = 'pln_[a-z0-9]{20}'\n",
    )
    code, out, _ = check(capsys, "--repo", str(repo.path))
    assert code == 0
    differences = [line for line in out.splitlines() if line.startswith("difference:")]
    assert [line.split(":")[1].strip() for line in differences] == [
        "custom rule REPEAT_TOKEN",
        "custom rule GREEK_TOKEN",
    ]
    assert "(?i) back-reference without (?u)" in differences[0]
    assert "#known-differences-from-javas-regular-expressions" in differences[0]
    document = json.loads(check(capsys, "--repo", str(repo.path), "--format", "json")[1])
    assert [item["rule"] for item in document["differences"]] == ["REPEAT_TOKEN", "GREEK_TOKEN"]
