"""A commit that adds or changes any line of a PEM block is judged on the whole block.

Real pushes into bare repositories with the pre-receive hook (SHA-1: libgit2 and the
``git diff-tree`` fast path; SHA-256: git alone), real commits with the pre-commit
hook, and history scans: a key body written into a skeleton an earlier commit added,
a header put around a body an earlier commit added, and a key wrapped narrower than
the usual 64 columns are each a finding of the commit that completes the key.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
from typing import TYPE_CHECKING

import pytest

from spillguard.cli import main
from spillguard.sources import pemblocks
from spillguard.sources.diffparse import lines_by_number
from spillguard.sources.pemblocks import may_touch_block, with_touched_blocks
from testing.gitrepo import GitRepo
from testing.server import PATH, Server, install_hook
from testing.tokens import expand

if TYPE_CHECKING:
    from pathlib import Path

HEADER = "-----BEGIN RSA PRIVATE KEY-----\n"
FOOTER = "-----END RSA PRIVATE KEY-----\n"
SKELETON = f"# the deploy key\n{HEADER}<paste the key here>\n{FOOTER}"


def body(seed: str, width: int = 64) -> str:
    """A key body of 1,200 base64 characters wrapped at ``width`` columns."""
    text = "MIIE" + expand("{rand:b64:1196}", seed)
    return "".join(f"{text[at : at + width]}\n" for at in range(0, len(text), width))


@pytest.fixture(params=["sha1", "sha256"])
def server(request: pytest.FixtureRequest, tmp_path: Path) -> Server:
    server = Server(tmp_path, object_format=request.param)
    server.work.write("README.md", "hello\n")
    server.work.commit("base")
    server.push("main")
    install_hook(server.bare.path)
    return server


def pushed_findings(server: Server) -> tuple[int, list[str]]:
    code, output = server.push("main")
    return code, [
        line.split("  ", 2)[2].strip() for line in output.splitlines() if "  blocking  " in line
    ]


def test_a_body_written_into_a_skeleton_rejects_the_push(server: Server) -> None:
    work = server.work
    work.write("deploy/key.pem", SKELETON)
    work.commit("a placeholder for the key")
    work.write("deploy/key.pem", SKELETON.replace("<paste the key here>\n", body("skeleton")))
    filled = work.commit("the key")
    code, found = pushed_findings(server)
    assert code != 0
    assert [line.rsplit("  ", 1)[0] for line in found] == [
        f"{filled[:10]}  refs/heads/main  deploy/key.pem:2  RSA_PRIVATE_KEY"
    ]


def test_a_header_put_around_an_earlier_body_rejects_the_push(server: Server) -> None:
    work = server.work
    work.write("deploy/key.txt", f"# data\n{body('around')}")
    work.commit("some base64")
    work.write("deploy/key.txt", f"# data\n{HEADER}{body('around')}{FOOTER}")
    wrapped = work.commit("now it is a key")
    code, found = pushed_findings(server)
    assert code != 0
    assert [line.split("  ")[0] for line in found] == [wrapped[:10]]
    assert "deploy/key.txt:2  RSA_PRIVATE_KEY" in found[0]


def test_removing_what_kept_a_header_from_its_body_rejects_the_push(server: Server) -> None:
    """Filler wider than the rules look past a header hides the body; a later commit
    that only removes the filler completes the key, and is judged on the block."""
    work = server.work
    filler = "".join(
        f"# filler line {n}, nothing to see here, move along please\n" for n in range(6)
    )
    work.write("deploy/key.pem", f"{HEADER}{filler}{body('filler')}{FOOTER}")
    work.commit("a key kept from its header")
    work.write("deploy/key.pem", f"{HEADER}{body('filler')}{FOOTER}")
    removed = work.commit("remove the filler")
    code, found = pushed_findings(server)
    assert code != 0
    assert [line.split("  ")[0] for line in found] == [removed[:10]]
    assert "deploy/key.pem:1  RSA_PRIVATE_KEY" in found[0]


@pytest.mark.parametrize("width", [48, 20])
def test_a_key_wrapped_narrow_rejects_the_push(server: Server, width: int) -> None:
    server.work.write("deploy/id_rsa", f"{HEADER}{body('narrow', width)}{FOOTER}")
    server.work.commit("a narrow key")
    code, found = pushed_findings(server)
    assert code != 0
    assert len(found) == 1
    assert "deploy/id_rsa:1  RSA_PRIVATE_KEY" in found[0]


def test_an_edit_beside_a_block_does_not_judge_it(server: Server) -> None:
    """Only a block the commit touches is judged: a key the server already holds
    (pushed before the hook) is not reported by a commit that edits other lines."""
    work = server.work
    work.write("legacy.pem", f"{HEADER}{body('legacy')}{FOOTER}\n# notes\n")
    work.commit("legacy key")
    server.admin("[hook]\nmode = 'warn'\n")
    assert server.push("main")[0] == 0
    server.admin("")
    work.write("legacy.pem", f"{HEADER}{body('legacy')}{FOOTER}\n# notes, more of them\n")
    work.commit("edit the notes")
    code, found = pushed_findings(server)
    assert (code, found) == (0, [])


@pytest.mark.parametrize("object_format", ["sha1", "sha256"])
def test_pre_commit_hook_and_scan_judge_the_whole_block(tmp_path: Path, object_format: str) -> None:
    repo = GitRepo(tmp_path / "repo", object_format=object_format)
    repo.write("key.pem", SKELETON)
    repo.commit("a placeholder")
    subprocess.run(
        ["spillguard", "install", "pre-commit"],
        cwd=repo.path,
        check=True,
        capture_output=True,
        env={**os.environ, "PATH": PATH},
    )
    repo.write("key.pem", SKELETON.replace("<paste the key here>\n", body("hook")))
    repo.git("add", "key.pem")
    committed = subprocess.run(
        ["git", "commit", "-q", "-m", "the key"],
        cwd=repo.path,
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, "PATH": PATH},
    )
    assert committed.returncode != 0
    assert "key.pem:2" in committed.stderr
    assert "RSA_PRIVATE_KEY  blocking" in committed.stderr
    repo.git("commit", "-q", "--no-verify", "-m", "the key anyway")
    report = tmp_path / "report.json"
    assert (
        main(["scan", "--repo", str(repo.path), "--format", "json", "--output", str(report)]) == 1
    )
    found = json.loads(report.read_text())["findings"]
    assert [(f["path"], f["line"], f["rule"], f["commit"]) for f in found] == [
        ("key.pem", 2, "RSA_PRIVATE_KEY", repo.head())
    ]


def test_which_lines_make_a_file_worth_reading() -> None:
    assert may_touch_block({3: b"-----END RSA PRIVATE KEY-----\n"})
    assert may_touch_block({3: b"MIIEvQIBADANBgkqhkiG9w0BAQEF\n"})
    assert may_touch_block({3: b"x = 1\n", 4: b"  Zm9vYmFy/w==\r\n"})  # indented (YAML)
    assert not may_touch_block({3: b"end\n", 4: b"    else\n", 5: b"DONE\n", 6: b"x = 1\n"})
    assert not may_touch_block({3: b"import pygit2\n", 4: b"return 0\n", 5: b"a=1\n"})
    assert not may_touch_block({})


def test_only_touched_blocks_join_the_added_lines() -> None:
    data = f"a\n{HEADER}AAAA\nBBBB\n{FOOTER}b\n{HEADER}CCCC\n".encode()
    assert list(with_touched_blocks({4: b"BBBB\n"}, data)) == [2, 3, 4, 5]
    assert list(with_touched_blocks({6: b"b\n"}, data)) == [6]
    assert list(with_touched_blocks({8: b"CCCC\n"}, data)) == [7, 8]  # open to the end
    # lines removed after line 3 (inside the first block) or after line 5 (its last)
    assert list(with_touched_blocks({}, data, [3])) == [2, 3, 4, 5]
    assert list(with_touched_blocks({}, data, [5])) == []


def _blocks_line_by_line(lines: dict[int, bytes]) -> list[tuple[int, int]]:
    """The blocks as the rule says them, one line at a time (the reference)."""
    blocks: list[tuple[int, int]] = []
    first: int | None = None
    for number, line in lines.items():
        if any(opening in line for opening in pemblocks._OPENING):
            if first is not None:
                blocks.append((first, number - 1))
            first = number
        elif first is not None and (
            any(closing in line for closing in pemblocks._CLOSING)
            or number - first >= pemblocks._MAX_BLOCK_LINES
        ):
            blocks.append((first, number))
            first = None
    if first is not None:
        blocks.append((first, len(lines)))
    return blocks


_PIECES = (
    HEADER,
    FOOTER,
    "---- BEGIN SSH2 PUBLIC KEY ----\n",
    "---- END SSH2 PUBLIC KEY ----\n",
    "PuTTY-User-Key-File-3: ssh-rsa\n",
    "Private-MAC: 0123abcd\n",
    f"x = '{FOOTER.strip()}' + '{HEADER.strip()}'\n",  # a closing, then an opening
    f"{HEADER.strip()} {FOOTER.strip()}\n",  # an opening, then a closing
    "MIIEvQIBADANBgkqhkiG9w0BAQEF\n",
    "x = 1\n",
    "\n",
)


@pytest.mark.parametrize("seed", range(40))
def test_blocks_are_found_as_the_rule_says_line_by_line(seed: int, monkeypatch) -> None:
    """The search over the whole file finds the blocks the line-by-line rule finds,
    the longest-block limit included (made small here to be met often)."""
    rng = random.Random(seed)  # noqa: S311 - reproducible cases, not secrets
    monkeypatch.setattr(pemblocks, "_MAX_BLOCK_LINES", rng.choice((3, 5, 1000)))
    pieces = rng.choices(_PIECES, weights=(4, 3, 1, 1, 1, 1, 1, 1, 6, 6, 2), k=rng.randint(1, 60))
    text = "".join(pieces)
    if rng.random() < 0.3:
        text = text.rstrip("\n")  # a last line without its newline
    data = text.encode()
    lines = lines_by_number(data)
    added = {n: lines[n] for n in lines if rng.random() < 0.05}
    removed = [n for n in lines if rng.random() < 0.05]
    expected = dict(added)
    for first, last in _blocks_line_by_line(lines):
        if any(first <= n <= last for n in added) or any(first <= n < last for n in removed):
            expected.update({n: lines[n] for n in range(first, last + 1)})
    if any(opening in data for opening in pemblocks._OPENING):
        assert pemblocks._blocks(data) == _blocks_line_by_line(lines)
    found = with_touched_blocks(added, data, removed)
    assert list(found.items()) == sorted(expected.items())


# Keys as their decoders read them --------------------------------------------------------

#: How each kind of key is made now (never committed) and which decoder loads it.
KINDS = {
    "pkcs8-rsa": (
        ["openssl", "genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048"],
        "openssl",
    ),
    "pkcs8-ed25519": (["openssl", "genpkey", "-algorithm", "ed25519"], "openssl"),
    "openssh-ed25519": (["ssh-keygen", "-q", "-t", "ed25519", "-N", ""], "ssh-keygen"),
    "openssh-rsa": (["ssh-keygen", "-q", "-t", "rsa", "-b", "2048", "-N", ""], "ssh-keygen"),
}
LOADS = {
    "openssl": ["openssl", "pkey", "-noout", "-in"],
    "ssh-keygen": ["ssh-keygen", "-y", "-f"],
}


def make_key(kind: str, where: Path) -> str:
    command, _ = KINDS[kind]
    target = where / kind
    if command[0] == "openssl":
        subprocess.run([*command, "-out", str(target)], check=True, capture_output=True)
    else:
        subprocess.run([*command, "-C", "test", "-f", str(target)], check=True, capture_output=True)
    return target.read_text()


def rewrapped(key: str, shape: str) -> str:
    """The key with its body written another way a decoder still accepts (or not)."""
    lines = key.strip("\n").split("\n")
    header, footer, body_lines = lines[0], lines[-1], lines[1:-1]
    data = "".join(body_lines)

    def spaced(every: int, blank: str = " ") -> list[str]:
        return [
            blank.join(line[at : at + every] for at in range(0, len(line), every))
            for line in body_lines
        ]

    shapes = {
        "space-every-40": spaced(40),
        "space-every-4": spaced(4),
        "space-every-1": spaced(1),
        "tabs": spaced(10, "\t"),
        "one-line": [data],
        "one-spaced-line": [" ".join(data)],
        "width-8": [data[at : at + 8] for at in range(0, len(data), 8)],
        "indented": [f"    {line}" for line in body_lines],
        "blank-lines": "\n\n".join(body_lines).split("\n"),
        "a-line-of-5000-blanks": [" " * 5000, *body_lines],
    }
    text = "\n".join([header, *shapes[shape], footer]) + "\n"
    return text.replace("\n", "\r\n") if shape == "crlf" else text


SHAPES = [
    "space-every-40",
    "space-every-4",
    "space-every-1",
    "tabs",
    "one-line",
    "one-spaced-line",
    "width-8",
    "indented",
    "blank-lines",
    "a-line-of-5000-blanks",
]


@pytest.fixture(scope="module")
def decodable(tmp_path_factory: pytest.TempPathFactory) -> tuple[Server, dict[str, str]]:
    """A commit of every key in every shape, in a clone of a bare repository with the
    hook, not yet pushed; and, from a fresh clone of another copy of it, the files a
    decoder loads (path -> the kind's decoder): those are the keys a pusher could hide."""
    root = tmp_path_factory.mktemp("keys")
    server = Server(root)
    install_hook(server.bare.path)
    made = root / "made"
    made.mkdir()
    for kind in KINDS:
        key = make_key(kind, made)
        for shape in SHAPES:
            server.work.write(f"keys/{kind}.{shape}", rewrapped(key, shape))
        server.work.write(f"keys/{kind}.crlf", key.replace("\n", "\r\n"))
    server.work.commit("keys in every shape")
    copy = GitRepo(root / "copy.git", bare=True)
    server.work.git("push", "-q", str(copy.path), "HEAD:refs/heads/main")
    clone = root / "clone"
    subprocess.run(["git", "clone", "-q", str(copy.path), str(clone)], check=True)
    loaded = {}
    for path in sorted((clone / "keys").iterdir()):
        path.chmod(0o600)  # ssh-keygen refuses a key others can read
        decoder = KINDS[path.name.split(".")[0]][1]
        done = subprocess.run([*LOADS[decoder], str(path)], capture_output=True, check=False)
        if done.returncode == 0:
            loaded[f"keys/{path.name}"] = decoder
    return server, loaded


def test_the_shapes_are_ones_decoders_load(decodable: tuple[Server, dict[str, str]]) -> None:
    """Not a vacuous test: nearly every shape loads, in both decoders."""
    _, loaded = decodable
    for kind in KINDS:
        shapes = {path.split(".", 1)[1] for path in loaded if path.startswith(f"keys/{kind}.")}
        assert {
            "space-every-4",
            "space-every-1",
            "one-spaced-line",
            "a-line-of-5000-blanks",
        } <= shapes


def test_every_key_a_decoder_loads_is_a_finding(
    decodable: tuple[Server, dict[str, str]], capsys: pytest.CaptureFixture[str]
) -> None:
    server, loaded = decodable
    assert main(["scan", "--repo", str(server.work.path), "--format", "json"]) == 1
    found = json.loads(capsys.readouterr().out)["findings"]
    reported = {f["path"]: (f["line"], f["rule"]) for f in found}
    assert set(loaded) <= set(reported)
    for path, decoder in loaded.items():
        rule = "SSH_PRIVATE_KEY" if decoder == "ssh-keygen" else "PKCS8_PRIVATE_KEY"
        assert reported[path] == (1, rule), path


def test_a_spaced_body_written_into_a_skeleton_rejects_the_push(server: Server) -> None:
    """The body's lines hold blanks, as decoders allow: they still make the block read."""
    work = server.work
    work.write("deploy/key.pem", SKELETON)
    work.commit("a placeholder")
    assert server.push("main")[0] == 0
    made = work.path.parent / "made"
    made.mkdir()
    key = rewrapped(make_key("pkcs8-rsa", made), "space-every-4").split("\n")
    work.write(
        "deploy/key.pem", SKELETON.replace("<paste the key here>\n", "\n".join(key[1:-2]) + "\n")
    )
    work.commit("the key, into the placeholder")
    code, found = pushed_findings(server)
    assert code != 0
    assert [line.split("  ", 2)[2][:33] for line in found] == ["deploy/key.pem:2  RSA_PRIVATE_KEY"]


def test_every_key_a_decoder_loads_rejects_the_push(
    decodable: tuple[Server, dict[str, str]],
) -> None:
    server, loaded = decodable
    code, found = pushed_findings(server)
    assert code != 0
    named = {line.split("  ")[2].split(":")[0] for line in found}  # commit, ref, path:line
    assert set(loaded) <= named
