"""The text report on a real terminal: colour only there, and nothing the repository can inject."""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING

import pytest

from testing.terminal import run_on_terminal
from testing.tokens import expand

if TYPE_CHECKING:
    from pathlib import Path

AWS_KEY = expand("AKIA{rand:A2:16}", "terminal")
HOSTILE_NAME = "[bold red]x[blink]\x1b]0;owned\x07.env"
CSI = "\x1b["


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("tree")
    (root / HOSTILE_NAME).write_text(f"key={AWS_KEY}\x1b[2J\n")
    return root


def scan_on_terminal(tree: Path, *flags: str, stream: str = "stdout", **env: str):
    base = {k: v for k, v in os.environ.items() if k not in {"NO_COLOR", "FORCE_COLOR"}}
    argv = [sys.executable, "-m", "spillguard", "scan", "--files", str(tree), *flags]
    return run_on_terminal(argv, stream=stream, env={**base, "TERM": "xterm", **env})


def test_colour_on_a_terminal_and_repository_text_stays_inert(tree: Path) -> None:
    run = scan_on_terminal(tree)
    assert run.code == 1
    assert CSI in run.terminal  # coloured
    assert "[bold red]x[blink]\\x1b]0;owned\\x07.env:1" in run.terminal  # markup shown literally
    assert "\x1b]0" not in run.terminal  # no title-setting sequence reached the terminal
    assert "\x1b[2J" not in run.terminal
    assert AWS_KEY not in run.terminal
    assert "AKIA****" in run.terminal


@pytest.mark.parametrize(
    ("flags", "env"),
    [((), {"NO_COLOR": "1"}), (("--no-color",), {}), (("--color", "never"), {"FORCE_COLOR": "1"})],
)
def test_no_colour_when_asked_even_on_a_terminal(tree: Path, flags, env) -> None:
    run = scan_on_terminal(tree, *flags, **env)
    assert run.code == 1
    assert "\x1b" not in run.terminal
    assert "^^^^" in run.terminal  # without colour a caret line marks the match


def test_force_color_and_color_always_colour_a_pipe(tree: Path) -> None:
    forced = scan_on_terminal(tree, stream="stderr", FORCE_COLOR="1")
    assert CSI in forced.piped
    always = scan_on_terminal(tree, "--color", "always", stream="stderr", NO_COLOR="1")
    assert CSI in always.piped
    plain = scan_on_terminal(tree, stream="stderr")
    assert "\x1b" not in plain.piped
