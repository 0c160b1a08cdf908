"""The pre-receive walk (git rev-list) finds the same new commits as a libgit2 walk."""

from __future__ import annotations

import random
import subprocess

import pygit2
import pytest
from pygit2.enums import SortMode

from spillguard.sources.received import _existing_tips, _walk
from testing.genrepo import generate


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory):
    target = tmp_path_factory.mktemp("walk") / "repo.git"
    generate(target, commits=400, seed=5)
    return target


def simple_walk(repo: pygit2.Repository, tips: list[pygit2.Oid]) -> list[pygit2.Oid]:
    """``git rev-list --topo-order --reverse TIPS --not --all`` in one libgit2 walk."""
    walker = repo.walk(tips[0], SortMode.TOPOLOGICAL | SortMode.REVERSE)
    for tip in tips[1:]:
        walker.push(tip)
    for hidden in _existing_tips(repo):
        walker.hide(hidden)
    return [commit.id for commit in walker]


def assert_parents_first(repo: pygit2.Repository, walked: list[pygit2.Oid]) -> None:
    seen: set[pygit2.Oid] = set()
    for commit in walked:
        assert not set(repo[commit].peel(pygit2.Commit).parent_ids) & (set(walked) - seen)
        seen.add(commit)


@pytest.mark.parametrize("seed", range(12))
def test_same_commits_in_the_same_order(generated, tmp_path, seed: int) -> None:
    """Refs are dropped from a clone, as if a push were bringing their commits again."""
    clone = tmp_path / "clone.git"
    subprocess.run(["git", "clone", "-q", "--mirror", str(generated), str(clone)], check=True)
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
    walked = [commit.id for commit in _walk(repo, tips)]
    assert sorted(walked) == sorted(expected)
    assert_parents_first(repo, walked)
    command = ["git", "-C", str(clone), "rev-list", "--topo-order", "--reverse", "--stdin"]
    given = [str(tip) for tip in tips] + [f"^{hidden}" for hidden in _existing_tips(repo)]
    listed = subprocess.run(
        command, input="\n".join(given), capture_output=True, text=True, check=True
    )
    assert [str(commit) for commit in walked] == listed.stdout.split()
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("PATH", str(tmp_path))  # no git: libgit2 walks it all
        assert [commit.id for commit in _walk(repo, tips)] == expected
    if seed % 2:
        assert len(expected) > 20
