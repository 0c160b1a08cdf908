"""``spillguard scan --files`` and ``--tree`` through the real command line."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from spillguard.cli import main
from spillguard.core.models import MAX_LINE_LENGTH
from testing.tokens import expand

if TYPE_CHECKING:
    from testing.gitrepo import GitRepo

AWS_KEY = expand("AKIA{rand:A2:16}", "cli")


def run_json(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, dict]:
    code = main([*argv, "--format", "json"])
    return code, json.loads(capsys.readouterr().out)


def test_files_reports_masked_finding_and_exits_1(tmp_path: Path, capsys) -> None:
    (tmp_path / "settings.py").write_text(f"x = 1\naws_key = '{AWS_KEY}'\n")
    code, report = run_json(capsys, "scan", "--files", str(tmp_path))
    assert code == 1
    (finding,) = report["findings"]
    assert finding["rule"] == "AWS_CLIENT_ID"
    assert finding["line"] == 2
    assert finding["matchText"] == AWS_KEY[:4] + "*" * 16
    assert AWS_KEY not in json.dumps(report)
    assert (
        finding["text"][finding["lineOffsetStart"] : finding["lineOffsetEnd"]]
        == finding["matchText"]
    )
    assert report["summary"]["blocking"] == 1


def test_include_plaintext_shows_the_secret(tmp_path: Path, capsys) -> None:
    (tmp_path / "a.txt").write_text(f"{AWS_KEY}\n")
    _, report = run_json(capsys, "scan", "--files", str(tmp_path), "--include-plaintext")
    assert report["findings"][0]["matchText"] == AWS_KEY


def test_clean_tree_exits_0(tmp_path: Path, capsys) -> None:
    (tmp_path / "a.py").write_text("print('hello')\n")
    code, report = run_json(capsys, "scan", "--files", str(tmp_path))
    assert (code, report["findings"]) == (0, [])


def test_text_report_shows_each_finding_once_masked(tmp_path: Path, capsys) -> None:
    (tmp_path / "a.env").write_text(f"AWS_ID={AWS_KEY}\nB={AWS_KEY}\n")
    assert main(["scan", "--repo", str(tmp_path), "--files", str(tmp_path)]) == 1
    out = capsys.readouterr().out
    assert AWS_KEY not in out
    assert out.splitlines()[:8] == [
        "a.env:1:8  AWS_CLIENT_ID  blocking  AWS access key ID",
        "    AWS_ID=AKIA********",
        "           ^^^^^^^^^^^^",
        "    not a secret? spillguard review add --at a.env:1",
        "a.env:2:3  AWS_CLIENT_ID  blocking  AWS access key ID",
        "    B=AKIA********",
        "      ^^^^^^^^^^^^",
        "    not a secret? spillguard review add --at a.env:2",
    ]
    assert "2 finding(s), 2 blocking" in out


def test_pragma_and_include_allowlisted(tmp_path: Path, capsys) -> None:
    (tmp_path / "a.py").write_text(f"key = '{AWS_KEY}'  # pragma: allowlist-secret\n")
    code, report = run_json(capsys, "scan", "--files", str(tmp_path))
    assert (code, report["findings"]) == (0, [])
    assert report["summary"]["silenced"] == {"pragma": 1, "allowlist_paths": 0, "reviewed": 0}
    code, report = run_json(capsys, "scan", "--files", str(tmp_path), "--include-allowlisted")
    assert code == 0
    assert report["findings"][0]["allowlisted"] is True


def test_searches_binaries_skips_git_dir_and_names_a_large_binary(tmp_path: Path, capsys) -> None:
    (tmp_path / "blob.bin").write_bytes(b"\0\1\2" + AWS_KEY.encode())
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "config").write_text(AWS_KEY)
    with (tmp_path / "huge.log").open("wb") as handle:  # 100 MB, sparse: cheap to make
        handle.truncate(100 * 1024 * 1024)
    code, report = run_json(capsys, "scan", "--files", str(tmp_path))
    assert code == 1
    assert [item["path"].rsplit("/", 1)[-1] for item in report["findings"]] == ["blob.bin"]
    reasons = {item["path"].rsplit("/", 1)[-1]: item["reason"] for item in report["skipped"]}
    assert reasons == {"huge.log": "binary over max_file_size"}


def test_non_utf8_text_is_scanned(tmp_path: Path, capsys) -> None:
    (tmp_path / "latin1.txt").write_bytes(b"caf\xe9 " + AWS_KEY.encode() + b"\n")
    code, report = run_json(capsys, "scan", "--files", str(tmp_path))
    assert code == 1
    assert report["findings"][0]["path"].endswith("latin1.txt")


def test_ten_megabyte_line_finds_the_key_with_offsets_into_the_match(
    tmp_path: Path, capsys
) -> None:
    line = "a=1;" * (10_000_000 // 4) + f"k='{AWS_KEY}';"
    (tmp_path / "bundle.min.js").write_text(line + "\n")
    code, report = run_json(capsys, "scan", "--files", str(tmp_path), "--include-plaintext")
    assert code == 1
    (finding,) = report["findings"]
    assert len(line) > MAX_LINE_LENGTH
    assert finding["truncated"] is True
    assert finding["text"] == AWS_KEY
    assert (finding["lineOffsetStart"], finding["lineOffsetEnd"]) == (0, 20)


def test_missing_path_is_reported_and_the_rest_still_scanned(tmp_path: Path, capsys) -> None:
    (tmp_path / "a.txt").write_text(f"{AWS_KEY}\n")
    code = main(["scan", "--files", str(tmp_path / "nope"), str(tmp_path / "a.txt")])
    captured = capsys.readouterr()
    assert code == 1
    assert "a.txt:1" in captured.out
    assert "nope: does not exist" in captured.out
    assert main(["scan", "--files", str(tmp_path / "nope")]) == 3


def test_tree_scan_reads_the_committed_tree_not_the_work_tree(repo: GitRepo, capsys) -> None:
    repo.write("app/config.yml", f"aws: {AWS_KEY}\n")
    repo.write("logo.png", b"\x89PNG\0\0" + AWS_KEY.encode())
    repo.commit("add config")
    (repo.path / "app" / "config.yml").write_text("clean now\n")
    code, report = run_json(capsys, "scan", "--repo", str(repo.path), "--tree", "HEAD")
    assert code == 1
    # a binary's printable runs are judged
    assert [(f["path"], f["line"]) for f in report["findings"]] == [
        ("app/config.yml", 1),
        ("logo.png", 1),
    ]
    assert report["skipped"] == []


def test_unknown_revision_is_one_line_and_exit_3(repo: GitRepo, capsys) -> None:
    repo.write("a", "x\n")
    repo.commit()
    assert main(["scan", "--repo", str(repo.path), "--tree", "no-such-ref"]) == 3
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ["spillguard: error: unknown revision 'no-such-ref'"]


def test_not_a_repository(tmp_path: Path, capsys) -> None:
    assert main(["scan", "--repo", str(tmp_path), "--tree", "HEAD"]) == 3
    assert "not a git repository" in capsys.readouterr().err


def test_python_dash_m_runs_without_importing_rich(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("nothing here\n")
    probe = (
        "import sys, runpy; sys.argv = ['spillguard', 'scan', '--files', sys.argv[1]]\n"
        "try:\n    runpy.run_module('spillguard', run_name='__main__')\n"
        "except SystemExit as e:\n    assert e.code == 0, e.code\n"
        "assert 'rich' not in sys.modules, 'rich imported on the plain path'\n"
    )
    subprocess.run([sys.executable, "-c", probe, str(tmp_path)], check=True)


def test_rules_json_lists_builtin_rules(capsys, tmp_path: Path) -> None:
    assert main(["rules", "--repo", str(tmp_path), "--format", "json"]) == 0
    rules = json.loads(capsys.readouterr().out)["rules"]
    names = {rule["name"] for rule in rules}
    assert {"AWS_CLIENT_ID", "AWS_SECRET_ACCESS_KEY", "GENERIC_PASSWORD"} <= names
    assert all(rule["kind"] == "builtin" and rule["source"] == "builtin" for rule in rules)


def test_text_report_shows_escape_sequences_in_paths_harmlessly(tmp_path: Path, capsys) -> None:
    (tmp_path / "evil\x1b[2J.env").write_text(f"AWS_ID={AWS_KEY}\n")
    assert main(["scan", "--files", str(tmp_path)]) == 1
    out = capsys.readouterr().out
    assert "\x1b" not in out
    assert "evil\\x1b[2J.env:1:8  AWS_CLIENT_ID" in out


def test_text_report_shows_a_tab_in_a_path_as_an_escape(tmp_path: Path, capsys) -> None:
    """Not as spaces: "a<TAB>b.env" and "a    b.env" are different files."""
    (tmp_path / "a\tb.env").write_text(f"AWS_ID={AWS_KEY}\n")
    assert main(["scan", "--files", str(tmp_path / "a\tb.env"), str(tmp_path / "no\tpe")]) == 1
    out = capsys.readouterr().out
    assert "\t" not in out
    assert "a\\x09b.env:1:8  AWS_CLIENT_ID" in out
    assert "no\\x09pe: does not exist" in out


@pytest.mark.parametrize("fmt", ["text", "json", "jsonl", "sarif", "csv"])
def test_other_secrets_on_a_reported_line_are_masked_too(tmp_path: Path, capsys, fmt: str) -> None:
    # Only the first rule's first match is the finding, but the line shown with it
    # must not carry the other secrets in clear.
    github = expand("ghp_{rand:Aa0:30}{crc32}", "other")
    second_aws = expand("AKIA{rand:A2:16}", "second")
    (tmp_path / "a.env").write_text(f'a="{github}" b="{AWS_KEY}" c="{second_aws}"\n')
    assert main(["scan", "--files", str(tmp_path), "--format", fmt, "--no-deduplicate"]) == 1
    captured = capsys.readouterr()
    shown = captured.out + captured.err
    assert "AWS_CLIENT_ID" in shown
    for secret in (github, AWS_KEY, second_aws):
        assert secret not in shown
        assert secret[:4] in shown


def test_plaintext_shows_the_other_secrets_on_the_line(tmp_path: Path, capsys) -> None:
    github = expand("ghp_{rand:Aa0:30}{crc32}", "other")
    (tmp_path / "a.env").write_text(f'a="{github}" b="{AWS_KEY}"\n')
    _, report = run_json(capsys, "scan", "--files", str(tmp_path), "--include-plaintext")
    assert report["findings"][0]["text"] == f'a="{github}" b="{AWS_KEY}"'


def test_files_summary_counts_files_not_commits(tmp_path: Path, capsys) -> None:
    (tmp_path / "a.txt").write_text("nothing here\n")
    assert main(["scan", "--files", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "scanned 1 file(s), 13 bytes in " in out
    assert "commit(s)" not in out


def test_tree_of_an_empty_repository_says_it_has_no_commits(repo: GitRepo, capsys) -> None:
    assert main(["scan", "--repo", str(repo.path), "--tree", "HEAD"]) == 3
    assert capsys.readouterr().err == (
        "spillguard: error: the repository has no commits yet (HEAD is unborn)\n"
    )


def test_rules_offers_only_the_options_it_honours(capsys) -> None:
    with pytest.raises(SystemExit):
        main(["rules", "--help"])
    usage = capsys.readouterr().out
    assert "--format {text,json}" in usage
    for option in ("csv", "--include-plaintext", "--deduplicate", "--color", "--quiet"):
        assert option not in usage


@pytest.mark.parametrize("argv", [["--format", "csv"], ["--include-plaintext"], ["--deduplicate"]])
def test_rules_refuses_what_it_cannot_do(tmp_path: Path, capsys, argv: list[str]) -> None:
    with pytest.raises(SystemExit) as stopped:
        main(["rules", "--repo", str(tmp_path), *argv])
    assert stopped.value.code == 2
    assert capsys.readouterr().out == ""


def test_rules_text_has_a_header_and_descriptions(tmp_path: Path, capsys) -> None:
    (tmp_path / ".spillguard.toml").write_text(
        "[custom_rules]\nINTERNAL_TOKEN = { regexp = 'itk_[a-z0-9]{24}', "
        "description = 'Our internal API token', blocking = false }\n"
    )
    assert main(["rules", "--repo", str(tmp_path)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == ["RULE", "KIND", "STATE", "MODE", "SOURCE", "DESCRIPTION"]
    assert lines[1].split()[:4] == ["AWS_CLIENT_ID", "builtin", "enabled", "blocking"]
    assert lines[1].endswith("  AWS access key ID")
    custom = next(line for line in lines if line.startswith("INTERNAL_TOKEN "))
    assert custom.split()[:4] == ["INTERNAL_TOKEN", "custom", "enabled", "warn"]
    assert custom.endswith("  Our internal API token")
    for row in (lines[1], custom):  # the columns line up under the header
        assert row[lines[0].index("KIND") :].startswith(("builtin", "custom"))
        assert row[lines[0].index("DESCRIPTION") :] in {
            "AWS access key ID",
            "Our internal API token",
        }


def test_reports_page_documents_the_max_line_length() -> None:
    readme = (Path(__file__).parent.parent / "docs" / "reports.md").read_text()
    assert f"longer than {MAX_LINE_LENGTH:,} characters" in readme


def test_files_scan_applies_the_repository_file_of_repo(tmp_path: Path, capsys) -> None:
    project = tmp_path / "project"
    (project / "fixtures").mkdir(parents=True)
    (project / "fixtures" / "keys.txt").write_text(f"{AWS_KEY}\n")
    (project / "app.py").write_text(f"aws_key = '{AWS_KEY}'\n")
    (project / ".spillguard.toml").write_text("allowlist_paths = ['fixtures/.*']\n")
    code, report = run_json(capsys, "scan", "--repo", str(project), "--files", str(project))
    assert code == 1
    # named from --repo, where the file's allowlist_paths are rooted
    assert [finding["path"] for finding in report["findings"]] == ["app.py"]


def test_files_scan_refuses_a_broken_repository_file(tmp_path: Path, capsys) -> None:
    (tmp_path / ".spillguard.toml").write_text("disabled_rules = [\n")
    code = main(["scan", "--repo", str(tmp_path), "--files", str(tmp_path)])
    assert code == 2
    assert ".spillguard.toml" in capsys.readouterr().err


def test_scan_and_rules_in_a_subdirectory_read_the_repository_file(
    repo: GitRepo, monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    # As git does, and as `config check` does: the file is at the top of the work tree.
    repo.write(".spillguard.toml", 'disabled_rules = ["AWS_CLIENT_ID"]\n')
    repo.write("app/settings.py", f"aws_id = '{AWS_KEY}'\n")
    repo.commit()
    monkeypatch.chdir(repo.path / "app")
    assert main(["scan"]) == 0
    assert main(["scan", "--tree", "HEAD"]) == 0
    assert main(["scan", "--files", "settings.py"]) == 0
    capsys.readouterr()
    assert main(["rules"]) == 0
    assert "AWS_CLIENT_ID                      builtin  disabled" in capsys.readouterr().out


def test_rules_refuses_a_missing_repository(tmp_path: Path, capsys) -> None:
    assert main(["rules", "--repo", str(tmp_path / "gone")]) == 2
    assert (
        capsys.readouterr().err
        == f"spillguard: error: --repo {tmp_path / 'gone'}: not a directory\n"
    )


def test_files_inside_the_repository_are_named_from_its_root(
    repo: GitRepo, monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    # allowlist_paths match the path from the repository root, however the files
    # are named on the command line (absolute, or from a subdirectory).
    repo.write(".spillguard.toml", "allowlist_paths = ['tests/fixtures/.*']\n")
    repo.write("tests/fixtures/sample.env", f"AWS_ID={AWS_KEY}\n")
    repo.write("tests/real.env", f"AWS_ID={AWS_KEY}\n")
    monkeypatch.chdir(repo.path / "tests")
    code, report = run_json(capsys, "scan", "--files", "fixtures")
    assert (code, report["findings"]) == (0, [])
    for given in (str(repo.path / "tests"), ".", "real.env"):
        code, report = run_json(capsys, "scan", "--files", given)
        assert (code, [f["path"] for f in report["findings"]]) == (1, ["tests/real.env"])
