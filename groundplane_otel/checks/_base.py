"""What every check shares: the Check protocol, NamedCheck, and reading the model's output."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from groundplane_otel.errors import MISSING, UnsupportedClaim
from groundplane_otel.registry import FactRegistry

__all__ = [
    "Check",
    "NamedCheck",
    "check_name",
    "field_value",
    "missing_field",
    "require_name",
    "walk_path",
]


@runtime_checkable
class Check(Protocol):
    """A check reads the registry and the output; it raises UnsupportedClaim or returns None."""

    def __call__(self, registry: FactRegistry, output: Mapping[str, Any], /) -> None: ...


@dataclass(frozen=True, slots=True)
class NamedCheck:
    """A check with a stable, readable name (what a Report lists).

    ``family`` (``superlative``, ``ranking_prefix`` … or ``custom``) and ``facts`` (the fact
    names it reads) feed telemetry and fail-closed decisions; they do not affect equality.
    """

    name: str
    fn: Callable[[FactRegistry, Mapping[str, Any]], None]
    family: str = field(default="custom", compare=False)
    facts: tuple[str, ...] = field(default=(), compare=False)

    def __call__(self, registry: FactRegistry, output: Mapping[str, Any]) -> None:
        self.fn(registry, output)

    def __str__(self) -> str:
        return self.name


def check_name(check: Callable[..., Any]) -> str:
    """The name a Report uses: ``NamedCheck.name``, else ``name``, else ``__name__``."""
    for attribute in ("name", "__name__"):
        value = getattr(check, attribute, None)
        if isinstance(value, str):
            return value
    return repr(check)


def describe(builder: str, **params: Any) -> str:
    """``builder(fact='X', field='winner')`` with None-valued params left out."""
    inner = ", ".join(f"{key}={value!r}" for key, value in params.items() if value is not None)
    return f"{builder}({inner})"


def missing_field(field_name: str) -> UnsupportedClaim:
    """The claim raised when the output lacks a declared field."""
    return UnsupportedClaim(
        field_name,
        MISSING,
        "a value",
        reason=f"the output declared no field {field_name!r}",
        code="field_missing",
    )


def field_value(output: Mapping[str, Any], field_name: str) -> Any:
    """The output's value for ``field_name``; a missing field is an UnsupportedClaim."""
    if field_name not in output:
        raise missing_field(field_name)
    return output[field_name]


def walk_path(value: Any, path: str | None) -> tuple[bool, Any]:
    """Follow a dotted ``path`` (``a.b.0.c``) into nested mappings/lists: (found, value)."""
    if not path:
        return True, value
    current = value
    for part in path.split("."):
        if isinstance(current, Mapping) and part in current:
            current = current[part]
        elif isinstance(current, (list, tuple)) and part.lstrip("-").isdigit():
            position = int(part)
            if not -len(current) <= position < len(current):
                return False, None
            current = current[position]
        else:
            return False, None
    return True, current


def require_name(builder: str, param: str, value: object, *, optional: bool = False) -> None:
    """Build-time check: a fact, field or column name is a non-empty str (or None if optional)."""
    if value is None and optional:
        return
    if not isinstance(value, str) or not value:
        allowed = "a non-empty string or None" if optional else "a non-empty string"
        raise TypeError(f"{builder}: {param} must be {allowed}, got {value!r}")
