"""Frozen slots dataclasses built cheaply on hot paths.

A frozen dataclass's ``__init__`` sets each field through ``object.__setattr__`` (about 1 k
instructions a field). A draft is an instance of a plain class with the very same slots, hence
the same memory layout: it takes plain attribute stores, then ``__class__`` assignment makes it
an instance of the frozen class, the very object ``__init__`` builds (fields, equality, repr,
hash and pickling alike), frozen from then on.
"""

from __future__ import annotations

from typing import Any, TypeVar

__all__ = ["draft_class", "finish"]

T = TypeVar("T")


def draft_class(frozen: type) -> type[Any]:
    """A mutable class with the slots of ``frozen``, a ``frozen=True, slots=True`` dataclass."""
    slots: tuple[str, ...] = frozen.__dict__["__slots__"]
    return type(f"{frozen.__name__}Draft", (), {"__slots__": slots})


def finish(draft: Any, frozen: type[T]) -> T:
    """``draft``, every field of ``frozen`` set, as the instance of ``frozen`` it now is."""
    draft.__class__ = frozen  # the same slots: CPython allows the switch
    built: T = draft
    return built
