"""A property of the gate that no special case passes: a token put anywhere git stores
text is rejected, wherever a clone would hand it to everyone.

For each kind of object (commit, tag, tree, blob), each place in it (every header,
the message before and after a NUL, under an encoding, each name at any depth, a
merge of any parent count) and each ref name, a seeded generator writes the objects by
hand (``testing.objects``) and puts a token there; one real push carries every case,
on a ref of its own, and each must be a finding at its place (its object, its
pseudo-path). The control is the same push with harmless text in place of each token:
accepted, without a finding, so the places themselves never trip a rule.
"""

from __future__ import annotations

import dataclasses
import random
import re
from typing import TYPE_CHECKING

import pytest

from testing.objects import PERSON, Objects, blob_entry, tree_entry
from testing.server import Server, install_hook
from testing.tokens import expand

if TYPE_CHECKING:
    from collections.abc import Callable

    from testing.objects import Entry

HARMLESS = "nothing-to-see-here"
#: A finding line as the pusher reads it: its object, ref, path and line, rule.
FINDING = re.compile(r"  (blocking)  (\S+)  (\S+)  (.+?):(\d+)  (\S+)  ")


@dataclasses.dataclass(frozen=True)
class Place:
    """Where a case put its text: the object a finding names (its id, or "-") and the
    pseudo-path or path it is found at."""

    name: str
    refs: dict[str, str]
    object_id: str
    path: str


@dataclasses.dataclass
class World:
    """The objects of one push: main's commit and tree, and side branches off main."""

    objects: Objects
    chance: random.Random
    main: str
    base: list[Entry]
    branches: list[str]

    def commit(
        self, entries: list[Entry] | None = None, *, ordered: bool = True, **fields: bytes
    ) -> str:
        """A commit on main whose tree is main's with ``entries`` (in git's order unless
        not ``ordered``), with ``fields`` of ``Objects.commit``."""
        tree = self.objects.tree([*self.base, *(entries or [])], ordered=ordered)
        return self.objects.commit(tree, [self.main], **fields)  # type: ignore[arg-type]

    def noise(self) -> str:
        return "".join(self.chance.choice("abcdefgh ") for _ in range(self.chance.randint(0, 12)))


def _commit_header(world: World, name: str, text: str) -> Place:
    key = f"x-{world.noise().replace(' ', '') or 'deploy'}-token".encode()
    commit = world.commit(headers=key + b" " + text.encode() + b"\n")
    return Place(name, {f"refs/heads/{name}": commit}, commit, "<commit header>")


def _gpgsig(world: World, name: str, text: str) -> Place:
    lines = [b"-----BEGIN PGP SIGNATURE-----", b"", text.encode(), b"-----END PGP SIGNATURE-----"]
    commit = world.commit(headers=b"gpgsig " + b"\n ".join(lines) + b"\n")
    return Place(name, {f"refs/heads/{name}": commit}, commit, "<commit header>")


def _mergetag(world: World, name: str, text: str) -> Place:
    lines = [
        f"object {world.main}".encode(),
        b"type commit",
        b"tag v1.0",
        b"tagger " + PERSON,
        b"",
        f"release {text}".encode(),
    ]
    commit = world.commit(headers=b"mergetag " + b"\n ".join(lines) + b"\n")
    return Place(name, {f"refs/heads/{name}": commit}, commit, "<commit header>")


def _second_author(world: World, name: str, text: str) -> Place:
    commit = world.commit(headers=f"author {text} <b@example.com> 1 +0000\n".encode())
    return Place(name, {f"refs/heads/{name}": commit}, commit, "<commit header>")


def _person(role: str, shape: str) -> Callable[[World, str, str], Place]:
    def build(world: World, name: str, text: str) -> Place:
        person = shape.format(text=text).encode()
        commit = world.commit(**{role: person})
        return Place(name, {f"refs/heads/{name}": commit}, commit, "<commit author>")

    return build


def _message(shape: str) -> Callable[[World, str, str], Place]:
    def build(world: World, name: str, text: str) -> Place:
        message = shape.format(text=text, noise=world.noise()).encode()
        commit = world.commit(message=message)
        return Place(name, {f"refs/heads/{name}": commit}, commit, "<commit message>")

    return build


def _encoded(encoding: str, stored: str) -> Callable[[World, str, str], Place]:
    """A message under an ``encoding`` header, stored as ``stored`` encodes it."""

    def build(world: World, name: str, text: str) -> Place:
        message = f"release {text}\n".encode(stored)
        commit = world.commit(message=message, headers=f"encoding {encoding}\n".encode())
        return Place(name, {f"refs/heads/{name}": commit}, commit, "<commit message>")

    return build


def _merge(world: World, name: str, text: str) -> Place:
    """A merge of 1 to 70 parents, a parent perhaps listed twice, its message after a NUL."""
    count = world.chance.randint(1, 70)
    parents = world.chance.sample(world.branches, world.chance.randint(1, count))
    parents += [world.chance.choice(parents) for _ in range(count - len(parents))]
    tree = world.objects.tree(world.base)
    commit = world.objects.commit(tree, parents, f"octopus\n\0{text}\n")
    return Place(f"{name}-{count}", {f"refs/heads/{name}": commit}, commit, "<commit message>")


def _merge_file(world: World, name: str, text: str) -> Place:
    """A merge of 1 to 70 parents whose resolution adds a file new to every parent."""
    count = world.chance.randint(1, 70)
    parents = [world.chance.choice(world.branches) for _ in range(count)]
    secret = blob_entry("resolved.env", world.objects.blob(f"ID={text}\n"))
    tree = world.objects.tree([*world.base, secret])
    commit = world.objects.commit(tree, parents, "merge")
    return Place(f"{name}-{count}", {f"refs/heads/{name}": commit}, commit, "resolved.env")


def _tag(field: str) -> Callable[[World, str, str], Place]:
    def build(world: World, name: str, text: str) -> Place:
        if field == "name":
            tag = world.objects.tag(world.main, "commit", text)
        elif field == "tagger":
            tag = world.objects.tag(
                world.main, "commit", name, tagger=f"{text} <a@b> 1 +0000".encode()
            )
        elif field == "header":
            tag = world.objects.tag(world.main, "commit", name, headers=f"x-note {text}\n".encode())
        elif field == "message":
            tag = world.objects.tag(world.main, "commit", name, f"{world.noise()}\n\n{text}\n")
        else:  # after a NUL
            tag = world.objects.tag(world.main, "commit", name, f"release\n\0{text}\n")
        path = "<tag message>" if field.startswith("message") or field == "nul" else "<tag header>"
        return Place(name, {f"refs/tags/{name}": tag}, tag, path)

    return build


def _tag_of_tag(first_pair: bool) -> Callable[[World, str, str], Place]:
    """A tag naming a tag whose message holds the text; with ``first_pair`` the outer
    tag has a second object/type pair too, which git does not follow."""

    def build(world: World, name: str, text: str) -> Place:
        inner = world.objects.tag(world.main, "commit", f"{name}-inner", f"{text}\n")
        more = f"object {world.main}\ntype commit\n".encode() if first_pair else b""
        outer = world.objects.tag(inner, "tag", name, headers=more)
        return Place(name, {f"refs/tags/{name}": outer}, inner, "<tag message>")

    return build


def _tag_of_blob(world: World, name: str, text: str) -> Place:
    blob = world.objects.blob(f"ID={text}\n")
    tag = world.objects.tag(blob, "blob", name)
    return Place(name, {f"refs/tags/{name}": tag}, "-", f"refs/tags/{name}")


def _tag_of_tree(world: World, name: str, text: str) -> Place:
    tree = world.objects.tree([blob_entry(f"{text}.txt", world.objects.blob("x\n"))])
    tag = world.objects.tag(tree, "tree", name)
    return Place(name, {f"refs/tags/{name}": tag}, "-", "<path name>")


def _name(shape: str) -> Callable[[World, str, str], Place]:
    """An entry named after the text, at a depth of 1 to 4, as a file, a folder, a
    symlink, a submodule or an empty folder."""

    def build(world: World, name: str, text: str) -> Place:
        objects = world.objects
        leaf = {
            "file": lambda: blob_entry(text, objects.blob("x\n")),
            "folder": lambda: tree_entry(
                text, objects.tree([blob_entry("a", objects.blob("y\n"))])
            ),
            "symlink": lambda: ("120000", text.encode(), objects.blob("target")),
            "submodule": lambda: ("160000", text.encode(), world.main),
            "empty": lambda: tree_entry(text, objects.tree([])),
        }[shape]()
        for depth in range(world.chance.randint(0, 3)):
            leaf = tree_entry(f"d{depth}", objects.tree([leaf]))
        commit = world.commit([leaf])
        return Place(name, {f"refs/heads/{name}": commit}, commit, "<path name>")

    return build


def _unsorted(world: World, name: str, text: str) -> Place:
    """A tree whose entries are out of git's order, the text's the last of them."""
    entries = [
        blob_entry("zz.txt", world.objects.blob("z\n")),
        blob_entry("aa.txt", world.objects.blob("a\n")),
        blob_entry(text, world.objects.blob("n\n")),
    ]
    world.chance.shuffle(entries)
    commit = world.commit(entries, ordered=False)
    return Place(name, {f"refs/heads/{name}": commit}, commit, "<path name>")


def _duplicate(world: World, name: str, text: str) -> Place:
    """A tree that names one path twice, the second time with the text in its blob."""
    entries = [
        blob_entry("twice.env", world.objects.blob("ID=none\n")),
        blob_entry("twice.env", world.objects.blob(f"ID={text}\n")),
    ]
    commit = world.commit(entries, ordered=False)
    return Place(name, {f"refs/heads/{name}": commit}, commit, "twice.env")


def _ref(kind: str) -> Callable[[World, str, str], Place]:
    def build(world: World, name: str, text: str) -> Place:
        return Place(name, {f"refs/{kind}/{name}-{text}": world.main}, "-", "<ref name>")

    return build


def _file(world: World, name: str, text: str) -> Place:
    """The well-known form: a file that holds it."""
    commit = world.commit([blob_entry("prod.env", world.objects.blob(f"ID={text}\n"))])
    return Place(name, {f"refs/heads/{name}": commit}, commit, "prod.env")


PLACES: dict[str, Callable[[World, str, str], Place]] = {
    "commit-unknown-header": _commit_header,
    "commit-gpgsig": _gpgsig,
    "commit-mergetag": _mergetag,
    "commit-second-author": _second_author,
    "commit-author-name": _person("author", "{text} <a@example.com> 1700000000 +0000"),
    "commit-author-email": _person("author", "Ada <{text}@example.com> 1700000000 +0000"),
    "commit-author-after-date": _person("author", "Ada <a@example.com> 1700000000 +0000 {text}"),
    "commit-committer-name": _person("committer", "{text} <a@example.com> 1700000000 +0000"),
    "commit-message-subject": _message("{noise} {text}\n"),
    "commit-message-body": _message("subject\n\n{noise} {text}\n"),
    "commit-message-after-nul": _message("subject\n{noise}\0{text}\n"),
    "commit-message-utf16-header": _encoded("UTF-16LE", "ascii"),
    "commit-message-utf16-stored": _encoded("UTF-16LE", "utf-16-le"),
    "commit-message-latin1": _encoded("ISO-8859-1", "latin-1"),
    # codecs that are no text encoding, or that raise whatever the errors asked
    "commit-message-rot13": _encoded("rot13", "ascii"),
    "commit-message-idna": _encoded("idna", "ascii"),
    "merge-message-after-nul": _merge,
    "merge-new-file": _merge_file,
    "tag-name": _tag("name"),
    "tag-tagger": _tag("tagger"),
    "tag-header": _tag("header"),
    "tag-message": _tag("message"),
    "tag-message-after-nul": _tag("nul"),
    "tag-of-a-tag": _tag_of_tag(first_pair=False),
    "tag-with-two-objects": _tag_of_tag(first_pair=True),
    "tag-of-a-blob": _tag_of_blob,
    "tag-of-a-tree": _tag_of_tree,
    "name-file": _name("file"),
    "name-folder": _name("folder"),
    "name-symlink": _name("symlink"),
    "name-submodule": _name("submodule"),
    "name-empty-folder": _name("empty"),
    "name-unsorted-tree": _unsorted,
    "blob-twice-in-a-tree": _duplicate,
    "ref-branch": _ref("heads"),
    "ref-tag": _ref("tags"),
    "blob-file": _file,
}


@pytest.fixture(scope="module", params=[("sha1", 1), ("sha256", 2)], ids=["sha1", "sha256"])
def server(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Server:
    object_format, _ = request.param
    server = Server(tmp_path_factory.mktemp("property"), object_format=object_format)
    server.work.write("README.md", "hello\n")
    server.work.commit("base")
    server.push("main")
    install_hook(server.bare.path)
    return server


def build(server: Server, seed: int, *, harmless: bool) -> list[Place]:
    """Every case of ``PLACES``, with a token (or ``HARMLESS``), its refs pointed."""
    work = server.work
    objects = Objects(
        work.path / ".git", server.bare.git("rev-parse", "--show-object-format").strip()
    )
    main = work.head()
    base: list[Entry] = [blob_entry("README.md", objects.blob("hello\n"))]
    chance = random.Random(seed)  # noqa: S311 - reproducible cases, not secrets
    branches = [
        objects.commit(objects.tree([*base, blob_entry(f"b{n}", objects.blob(f"{n}\n"))]), [main])
        for n in range(70)
    ]
    world = World(objects, chance, main, base, branches)
    places = []
    for name, builder in PLACES.items():
        text = HARMLESS if harmless else token(name, seed)
        places.append(builder(world, name, text))
    lines = "".join(
        f"update {ref} {target}\n" for place in places for ref, target in place.refs.items()
    )
    work.git("update-ref", "--stdin", input_text=lines)
    return places


def token(name: str, seed: int) -> str:
    return expand("AKIA{rand:A2:16}", f"{name}-{seed}")


def push(server: Server, places: list[Place]) -> tuple[int, str]:
    return server.push(*(f"+{ref}:{ref}" for place in places for ref in place.refs))


def test_a_token_anywhere_git_stores_text_is_found_there(server: Server, request) -> None:
    seed = request.node.callspec.params["server"][1]
    places = build(server, seed, harmless=False)
    before = server.refs()
    code, output = push(server, places)
    assert code != 0, output
    assert server.refs() == before
    found = {(shown[1], shown[3]) for shown in FINDING.findall(output)}
    missing = [place.name for place in places if (place.object_id[:10], place.path) not in found]
    assert missing == [], output
    # spillguard's own lines never show a token in clear, not even in a name they show
    told = [line for line in output.splitlines() if line.startswith("remote:")]
    tokens = [token(name, seed) for name in PLACES]
    assert [line for line in told if any(each in line for each in tokens)] == []


def test_the_same_places_with_harmless_text_are_accepted(server: Server, request) -> None:
    seed = request.node.callspec.params["server"][1]
    code, output = push(server, build(server, seed, harmless=True))
    assert code == 0, output
    assert "push accepted: no secrets found" in output
