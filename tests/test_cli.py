"""The command line a hook starts with: only what the command given needs is built."""

from __future__ import annotations

import pytest

from spillguard.arguments import _COMMANDS, build_parser
from spillguard.cli import _bare_hook, main


@pytest.mark.parametrize("command", sorted(_COMMANDS))
def test_each_command_is_parsed_and_helped_as_by_the_whole_parser(
    command: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """A parser built for one command only reads that command's arguments as the
    whole parser does, and says the same of it."""
    helps = []
    for parser in (build_parser(), build_parser(command)):
        with pytest.raises(SystemExit):
            parser.parse_args([command, "--help"])
        helps.append(capsys.readouterr().out)
    assert helps[0] == helps[1]
    assert f"usage: spillguard {command}" in helps[0]


def test_the_top_level_help_still_lists_every_command(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        build_parser("hook").parse_args(["--help"])
    listed = capsys.readouterr().out
    assert all(f"    {command}" in listed for command in _COMMANDS)


@pytest.mark.parametrize("kind", ["pre-commit", "pre-receive"])
def test_a_bare_hook_is_read_as_argparse_reads_it(kind: str) -> None:
    assert vars(_bare_hook(["hook", kind])) == vars(build_parser().parse_args(["hook", kind]))


@pytest.mark.parametrize(
    "given",
    [
        ["hook", "pre-push"],
        ["hook", "pre-push", "origin", "https://example.com/repo.git"],
        ["hook", "pre-commit", "--quiet"],
        ["hook", "pre-receive", "--config", "admin.toml"],
        ["hook"],
        ["scan", "pre-commit"],
        [],
    ],
)
def test_anything_more_is_argparses_to_parse(given: list[str]) -> None:
    assert _bare_hook(given) is None


@pytest.mark.parametrize(
    ("argv", "error"),
    [
        (
            ["scan", "--format", "xml"],
            "spillguard scan: error: argument --format: invalid choice: 'xml'",
        ),
        (["bogus"], "spillguard: error: argument COMMAND: invalid choice: 'bogus'"),
    ],
)
def test_a_usage_error_is_the_error_first_then_where_help_is(
    argv: list[str], error: str, capsys
) -> None:
    with pytest.raises(SystemExit) as exited:
        main(argv)
    assert exited.value.code == 2
    first, help_line = capsys.readouterr().err.splitlines()  # not a dozen lines of usage
    assert first.startswith(error)
    prog = error.partition(": error")[0]
    assert help_line == f"{prog}: see '{prog} --help'"
