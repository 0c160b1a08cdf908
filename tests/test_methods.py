"""The methods @dataclass writes for spillguard's classes come compiled from a kept cache."""

from __future__ import annotations

import dataclasses
import marshal
import sys
import types
from typing import TYPE_CHECKING

import pytest

from spillguard.core.methods import MethodCache

if TYPE_CHECKING:
    from pathlib import Path

SOURCE = '''
import dataclasses

@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class Token:
    """A value, as the models define theirs."""

    name: str
    secret: str = dataclasses.field(default="", repr=False)
    line: int = 1
'''


def define(module: str, cache: MethodCache, monkeypatch: pytest.MonkeyPatch) -> type:
    """``Token`` defined anew in a fresh module ``module``, by dataclasses using ``cache``."""
    monkeypatch.setitem(vars(dataclasses), "exec", cache.exec)
    namespace = types.ModuleType(module)
    monkeypatch.setitem(sys.modules, module, namespace)
    exec(SOURCE, vars(namespace))  # noqa: S102 - a class definition written above
    token: type = namespace.Token
    return token


def behaves_as_a_frozen_dataclass(token: type) -> None:
    value = token(name="AWS", secret="hidden", line=3)
    assert value == token(name="AWS", secret="hidden", line=3)
    assert value != token(name="AWS", secret="other", line=3)
    assert hash(value) == hash(token(name="AWS", secret="hidden", line=3))
    assert repr(value) == "Token(name='AWS', line=3)"
    with pytest.raises(dataclasses.FrozenInstanceError):
        value.line = 4
    assert dataclasses.replace(value, line=5).line == 5
    with pytest.raises(TypeError):
        token("AWS")  # keyword-only


def test_a_class_made_from_kept_methods_behaves_as_one_compiled_anew(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "methods.marshal"
    first = MethodCache(path)
    behaves_as_a_frozen_dataclass(define("spillguard.first", first, monkeypatch))
    assert first.missed
    first.save()
    kept = marshal.loads(path.read_bytes())  # noqa: S302 - written just above
    assert len(kept) >= 5  # __init__, __repr__, __eq__, __hash__, __setattr__...

    second = MethodCache(path)
    behaves_as_a_frozen_dataclass(define("spillguard.second", second, monkeypatch))
    assert not second.missed  # every method came from the cache
    assert set(second.used) <= set(kept)


@pytest.mark.parametrize("content", [b"", b"\x00garbage", marshal.dumps(["not", "a", "table"])])
def test_a_corrupt_or_foreign_cache_costs_only_the_compiling(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, content: bytes
) -> None:
    path = tmp_path / "methods.marshal"
    path.write_bytes(content)
    cache = MethodCache(path)
    behaves_as_a_frozen_dataclass(define("spillguard.corrupt", cache, monkeypatch))
    assert cache.missed


def test_a_kept_entry_that_is_no_code_is_compiled_anew(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "methods.marshal"
    first = MethodCache(path)
    define("spillguard.first", first, monkeypatch)
    path.write_bytes(marshal.dumps(dict.fromkeys(first.used, "not code")))
    cache = MethodCache(path)
    behaves_as_a_frozen_dataclass(define("spillguard.tampered", cache, monkeypatch))
    assert cache.missed


def test_only_spillguards_own_classes_are_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cache = MethodCache(tmp_path / "methods.marshal")
    behaves_as_a_frozen_dataclass(define("spillguardian.models", cache, monkeypatch))
    assert not cache.used


def test_an_unwritable_cache_is_never_an_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    blocker = tmp_path / "a file"
    blocker.write_text("not a folder", encoding="utf-8")
    cache = MethodCache(blocker / "__pycache__" / "methods.marshal")
    define("spillguard.unwritable", cache, monkeypatch)
    cache.save()
    assert sorted(path.name for path in tmp_path.iterdir()) == ["a file"]
