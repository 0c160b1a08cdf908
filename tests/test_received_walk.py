"""The pre-receive listing (git log) finds the same new commits as a libgit2 walk, the oracle."""

from __future__ import annotations

import os
import random
import subprocess

import pygit2
import pytest
from pygit2.enums import SortMode

from spillguard.core.models import RefUpdate
from spillguard.core.values import replace
from spillguard.sources.received_cli import _in_order, received_commits
from testing.genrepo import generate


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory):
    target = tmp_path_factory.mktemp("walk") / "repo.git"
    generate(target, commits=400, seed=5)
    return target


def existing_tips(repo: pygit2.Repository) -> list[pygit2.Oid]:
    """The commit of every ref the repository has (a tag of a tree or blob hides nothing)."""
    peeled = (_commit_of(reference) for reference in repo.references.iterator())
    return [tip for tip in peeled if tip is not None]


def _commit_of(reference: pygit2.Reference) -> pygit2.Oid | None:
    try:
        return reference.peel(pygit2.Commit).id
    except (pygit2.InvalidSpecError, pygit2.GitError, KeyError, ValueError):
        return None


def simple_walk(repo: pygit2.Repository, tips: list[pygit2.Oid]) -> list[pygit2.Oid]:
    """``git rev-list --topo-order --reverse TIPS --not --all`` in one libgit2 walk."""
    walker = repo.walk(tips[0], SortMode.TOPOLOGICAL | SortMode.REVERSE)
    for tip in tips[1:]:
        walker.push(tip)
    for hidden in existing_tips(repo):
        walker.hide(hidden)
    return [commit.id for commit in walker]


def assert_parents_first(repo: pygit2.Repository, walked: list[pygit2.Oid]) -> None:
    seen: set[pygit2.Oid] = set()
    for commit in walked:
        assert not set(repo[commit].peel(pygit2.Commit).parent_ids) & (set(walked) - seen)
        seen.add(commit)


@pytest.mark.parametrize("graph", [False, True], ids=["loose", "commit-graph"])
@pytest.mark.parametrize("seed", range(12))
def test_same_commits_in_the_same_order(generated, tmp_path, seed: int, graph: bool) -> None:
    """Refs are dropped from a clone, as if a push were bringing their commits again;
    with a commit-graph too, as a server's ``git gc`` writes one (git's topological
    listing walks it otherwise than its plain one, which is ordered afterwards: the
    commits and their order must be git's either way)."""
    clone = tmp_path / "clone.git"
    subprocess.run(["git", "clone", "-q", "--mirror", str(generated), str(clone)], check=True)
    if graph:
        subprocess.run(
            ["git", "-C", str(clone), "commit-graph", "write", "--reachable"], check=True
        )
    repo = pygit2.Repository(str(clone))
    rng = random.Random(seed)  # noqa: S311 - which refs to drop, not cryptography
    names = sorted(repo.references)
    dropped = rng.sample(names, rng.randint(1, len(names) // 3))
    if seed % 2:
        dropped.append("refs/heads/main")
    kept = next(name for name in names if name not in dropped)
    # a new branch on a commit the server has already: it brings nothing
    tips = [repo.references[kept].peel(pygit2.Commit).id] if seed % 3 == 0 else []
    for name in dict.fromkeys(dropped):
        tips.append(repo.references[name].peel(pygit2.Commit).id)
        repo.references.delete(name)
    expected = simple_walk(repo, tips)
    updates = [RefUpdate("0" * 40, str(tip), f"refs/heads/t{n}") for n, tip in enumerate(tips)]
    listed = received_commits(str(clone), updates)
    walked = [pygit2.Oid(hex=each.info.id) for each in listed]
    assert sorted(walked) == sorted(expected)
    assert_parents_first(repo, walked)
    command = ["git", "-C", str(clone), "rev-list", "--topo-order", "--reverse", "--stdin"]
    given = [str(tip) for tip in tips] + [f"^{hidden}" for hidden in existing_tips(repo)]
    rev_list = subprocess.run(
        command, input="\n".join(given), capture_output=True, text=True, check=True
    )
    assert [str(commit) for commit in walked] == rev_list.stdout.split()
    if seed % 2:
        assert len(expected) > 20


def test_dates_that_run_backwards_hide_no_new_commit(tmp_path) -> None:
    """git's plain listing stops walking the known refs by commit dates: pushed commits
    dated before the history they are pushed on (1970, on a server that has a
    commit-graph) are each listed, parents first, and nothing the server had is."""
    server = tmp_path / "server.git"
    work = tmp_path / "work"
    subprocess.run(["git", "init", "-q", "--bare", str(server)], check=True)
    subprocess.run(["git", "init", "-q", "-b", "main", str(work)], check=True)

    def commit(name: str, when: str) -> str:
        (work / name).write_text(name, encoding="utf-8")
        subprocess.run(["git", "-C", str(work), "add", name], check=True)
        dated = {"GIT_AUTHOR_DATE": when, "GIT_COMMITTER_DATE": when}
        subprocess.run(
            ["git", "-C", str(work), "commit", "-qm", name],
            check=True,
            env={**os.environ, **dated},
        )
        return subprocess.run(
            ["git", "-C", str(work), "rev-parse", "HEAD"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()

    for number in range(40):
        commit(f"known{number}", f"2024-01-{number % 28 + 1:02d}T12:00:00Z")
    subprocess.run(["git", "-C", str(work), "push", "-q", str(server), "main"], check=True)
    subprocess.run(["git", "-C", str(server), "commit-graph", "write", "--reachable"], check=True)
    new = [commit(f"new{number}", f"1970-01-0{number + 1}T00:00:00Z") for number in range(3)]
    subprocess.run(
        ["git", "-C", str(work), "push", "-q", str(server), "main:refs/tmp/new"], check=True
    )
    subprocess.run(["git", "-C", str(server), "update-ref", "-d", "refs/tmp/new"], check=True)
    updates = [RefUpdate("0" * 40, new[-1], "refs/heads/topic")]
    listed = received_commits(str(server), updates)
    assert [each.info.id for each in listed] == new


def test_the_walk_refuses_a_listing_the_heads_do_not_explain(generated) -> None:
    """Where git's plain listing holds a commit no head reaches above the boundary (a
    known commit that dates running backwards left in it), the walk from the heads
    says so (None), and ``received_commits`` has git list the push whole instead."""
    repo = pygit2.Repository(str(generated))
    main = repo.references["refs/heads/main"].peel(pygit2.Commit)
    older = main.parents[0].parents[0]
    listed = received_commits(
        str(generated), [RefUpdate("0" * 40, str(main.id), "refs/heads/t")], [str(older.id)]
    )
    assert [each.info.id for each in listed] == [str(main.parents[0].id), str(main.id)]
    # a listed commit named as a known one, with the parent the first listed has
    stray = replace(listed[0], info=replace(listed[0].info, id=str(older.id)))
    assert _in_order(str(generated), [*listed, stray], [str(main.id)]) is None
