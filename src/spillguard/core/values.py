"""Value classes for the code a git hook runs: frozen records without ``dataclasses``.

A commit hook defines some thirty value classes. As dataclasses, each writes its
``__init__``, ``__eq__``, ``__hash__`` and ``__repr__`` as source and compiles it in
every process (a sixth of a hook's CPU), and importing ``dataclasses`` brings
``inspect``, ``ast`` and ``dis`` (as much again). These classes are plain: each
annotates its fields (and lists them in ``__slots__``, but a rule), writes its own
keyword-only ``__init__`` (``fill(self, locals())``), and takes equality, hashing,
repr, pickling and immutability from ``Frozen``, as a frozen dataclass would have
them; ``replace`` is ``dataclasses.replace``. Mutable records (a diff being read)
take ``Record``'s equality and repr and set their fields themselves.
"""

from __future__ import annotations

import operator

TYPE_CHECKING = False  # typing.TYPE_CHECKING, as mypy reads it, without importing typing
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any, ClassVar, TypeVar

    T = TypeVar("T", bound="Record")


class FrozenError(AttributeError):
    """A field of a frozen value was set or deleted (``dataclasses.FrozenInstanceError``)."""


class Record:
    """Fields in order (their annotations), compared and shown by name: ``==`` between
    two values of the same class compares the fields but those in ``UNCOMPARED``; the
    repr, ``Name(field=value, ...)``, leaves out ``UNSHOWN``."""

    __slots__ = ()
    FIELDS: ClassVar[tuple[str, ...]] = ()
    COMPARED: ClassVar[tuple[str, ...]] = ()
    SHOWN: ClassVar[tuple[str, ...]] = ()
    #: Fields equality and the hash leave out (a cache, a process): ``compare=False``.
    UNCOMPARED: ClassVar[frozenset[str]] = frozenset()
    #: Fields the repr leaves out (a secret, a long text): ``repr=False``.
    UNSHOWN: ClassVar[frozenset[str]] = frozenset()
    #: The compared fields' values (one tuple, or the one value), read at C speed.
    _key: ClassVar[operator.attrgetter[Any]] = operator.attrgetter("__class__")

    def __init_subclass__(cls) -> None:
        cls.FIELDS = tuple(vars(cls).get("__annotations__", {}))
        slots = vars(cls).get("__slots__")
        if slots is not None and set(slots) != set(cls.FIELDS):
            raise TypeError(f"{cls.__qualname__}: __slots__ and the annotated fields differ")
        cls.COMPARED = tuple(name for name in cls.FIELDS if name not in cls.UNCOMPARED)
        cls.SHOWN = tuple(name for name in cls.FIELDS if name not in cls.UNSHOWN)
        cls._key = operator.attrgetter(*cls.COMPARED or ("__class__",))

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return bool(self._key(self) == self._key(other))

    # Mutable: unhashable, as a dataclass with eq and without frozen.
    __hash__: ClassVar[None] = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        shown = ", ".join(f"{name}={getattr(self, name)!r}" for name in self.SHOWN)
        return f"{type(self).__qualname__}({shown})"


class Frozen(Record):
    """A ``Record`` whose fields are set once, by ``fill``; hashable by them."""

    __slots__ = ()

    def __hash__(self) -> int:  # type: ignore[override]
        return hash(self._key(self))

    def __setattr__(self, name: str, value: object) -> None:
        raise FrozenError(f"cannot assign to field {name!r}")

    def __delattr__(self, name: str) -> None:
        raise FrozenError(f"cannot delete field {name!r}")

    def __getstate__(self) -> tuple[Any, ...]:
        return tuple(getattr(self, name) for name in self.FIELDS)

    def __setstate__(self, state: tuple[Any, ...]) -> None:
        for name, value in zip(self.FIELDS, state, strict=True):
            object.__setattr__(self, name, value)


def fill(value: Frozen, given: Mapping[str, Any]) -> None:
    """Set every field of ``value`` from ``given`` (its ``__init__``'s ``locals()``)."""
    for name in value.FIELDS:
        object.__setattr__(value, name, given[name])


def compared(value: Record) -> list[tuple[str, Any]]:
    """The fields equality compares, with their values, in order."""
    return [(name, getattr(value, name)) for name in value.COMPARED]


def replace(value: T, **changes: Any) -> T:
    """A copy of ``value`` with ``changes``, made by its ``__init__`` (an unknown field
    is a TypeError), as ``dataclasses.replace``."""
    fields = {name: getattr(value, name) for name in value.FIELDS}
    return type(value)(**{**fields, **changes})
