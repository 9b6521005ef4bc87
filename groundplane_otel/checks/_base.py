"""What every check shares: the Check protocol, NamedCheck, and reading the model's output."""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from groundplane_otel.errors import MISSING, UnsupportedClaim
from groundplane_otel.registry import FactRegistry

__all__ = [
    "Answer",
    "Check",
    "NamedCheck",
    "prepared",
    "ValuePath",
    "as_path",
    "check_name",
    "dotted_leaves",
    "field_value",
    "missing_field",
    "path_text",
    "require_json",
    "require_name",
    "step_into",
    "walk_path",
    "walk_steps",
]


Answer = Mapping[str, Any] | str
"""What a check reads: a JSON answer's fields (a mapping), or the whole answer text (a ``str``:
a guarded boundary declared with ``answer: text`` hands the raw text to its checks)."""


@runtime_checkable
class Check(Protocol):
    """A check reads the registry and the output; it raises UnsupportedClaim or returns None."""

    def __call__(self, registry: FactRegistry, output: Mapping[str, Any], /) -> None: ...


@dataclass(frozen=True, slots=True)
class NamedCheck:
    """A check with a stable, readable name (what a Report lists).

    ``family`` (``superlative``, ``ranking_prefix`` … or ``custom``) and ``facts`` (the fact
    names it reads) feed telemetry and fail-closed decisions; ``text`` says the check, as
    configured, reads a whole answer text (a ``str`` output: the prose families with their
    field arguments saying "the whole answer"); they do not affect equality. A check whose
    ``text`` is False raises TypeError on a ``str`` output.
    """

    name: str
    fn: Callable[[FactRegistry, Any], None]
    family: str = field(default="custom", compare=False)
    facts: tuple[str, ...] = field(default=(), compare=False)
    text: bool = field(default=False, compare=False)

    def __call__(self, registry: FactRegistry, output: Answer) -> None:
        self.fn(registry, output)

    def __str__(self) -> str:
        return self.name


def prepared(check: Callable[[FactRegistry, Any], None], registry: FactRegistry) -> Any:
    """``check`` ready to run on many outputs against ``registry`` (read-only meanwhile):
    the check's ``for_registry(registry)`` when it offers one (its per-registry setup done once;
    called as the check is, with that registry), else the check itself. A preparation that
    raises leaves the check as it is: it raises the same on each output."""
    target = check.fn if isinstance(check, NamedCheck) else check
    prepare = getattr(type(target), "for_registry", None)
    if prepare is None:
        return check
    try:
        return prepare(target, registry)
    except Exception:
        return check


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


def require_json(builder: str, output: Answer, hint: str = "") -> Mapping[str, Any]:
    """The output as a JSON object's fields; the whole answer text (a ``str``) is a TypeError
    naming the family (a check reading fields cannot read prose; ``hint`` says what can)."""
    if isinstance(output, str):
        raise TypeError(
            f"{builder}: this check reads JSON fields; declare the boundary with answer: json "
            f"(it was given the whole answer text, a str){hint}"
        )
    return output


def field_value(output: Mapping[str, Any], field_name: str) -> Any:
    """The output's value for ``field_name``; a missing field is an UnsupportedClaim."""
    if field_name not in output:
        raise missing_field(field_name)
    return output[field_name]


ValuePath = tuple[Hashable, ...]
"""A validated path: the keys (or list indices) to follow from the root; ``()`` is the root."""


def as_path(builder: str, path: object, *, what: str = "keys or list indices") -> ValuePath:
    """``path=`` as steps: a dotted string (``"a.b.0"``), a sequence of keys, or None / ``()``
    for the root. Checked when the check is built."""
    if path is None:
        return ()
    if isinstance(path, str):
        if not path:
            raise TypeError(
                f"{builder}: path must be a dotted string, a sequence of keys, or () for the "
                f"root, got {path!r}"
            )
        steps = path.split(".")
        if "" in steps:
            raise ValueError(
                f"{builder}: path must be dotted {what} like 'summary.entities', got {path!r}"
            )
        return tuple(steps)
    if isinstance(path, (list, tuple)):
        for step in path:
            try:
                hash(step)
            except TypeError:
                raise TypeError(
                    f"{builder}: every step of path must be a hashable key, got {step!r}"
                ) from None
        return tuple(path)
    raise TypeError(
        f"{builder}: path must be a dotted string, a sequence of keys, or () for the root, "
        f"got {path!r}"
    )


def path_text(steps: ValuePath) -> str:
    """The steps joined by ``.`` (how a field under a path is labelled)."""
    return ".".join(map(str, steps))


def step_into(current: Any, step: Hashable) -> tuple[bool, Any]:
    """One step of a path: a mapping's key, else a list index (an int, or digits in a str)."""
    if isinstance(current, Mapping):
        if step in current:
            return True, current[step]
        return False, None
    if isinstance(current, (list, tuple)):
        if isinstance(step, str) and step.lstrip("-").isdigit():
            position = int(step)
        elif isinstance(step, int) and not isinstance(step, bool):
            position = step
        else:
            return False, None
        if -len(current) <= position < len(current):
            return True, current[position]
    return False, None


def walk_steps(value: Any, steps: ValuePath) -> tuple[bool, Any, int]:
    """Follow ``steps`` into nested mappings/lists: (found, value, steps taken before a miss)."""
    current = value
    for depth, step in enumerate(steps):
        found, current = step_into(current, step)
        if not found:
            return False, None, depth
    return True, current, len(steps)


def dotted_leaves(
    value: Any, keep: Callable[[Any], bool], path: str = ""
) -> Iterator[tuple[str, Any]]:
    """Every leaf ``keep`` accepts inside a plain value (through mappings, lists and tuples),
    in order, with its dotted path (``path`` itself, ``""`` by default, for the value)."""
    if keep(value):
        yield path, value
    elif isinstance(value, Mapping):
        for key, item in value.items():
            yield from dotted_leaves(item, keep, f"{path}.{key}" if path else str(key))
    elif isinstance(value, (list, tuple)):
        for position, item in enumerate(value):
            yield from dotted_leaves(item, keep, f"{path}.{position}" if path else str(position))


def walk_path(value: Any, path: str | None) -> tuple[bool, Any]:
    """Follow a dotted ``path`` (``a.b.0.c``) into nested mappings/lists: (found, value)."""
    if not path:
        return True, value
    current = value
    for step in path.split("."):
        if type(current) is dict and step in current:  # the usual step: no ABC check
            current = current[step]
            continue
        found, current = step_into(current, step)
        if not found:
            return False, None
    return True, current


def require_name(builder: str, param: str, value: object, *, optional: bool = False) -> None:
    """Build-time check: a fact, field or column name is a non-empty str (or None if optional)."""
    if value is None and optional:
        return
    if not isinstance(value, str) or not value:
        if isinstance(value, FactRegistry):  # the builder itself was used as the check
            raise TypeError(
                f"{builder} was passed as a check without being called: it builds the check. "
                f'Call it with the fact it reads, e.g. {builder}("fact", ...), and pass what it '
                "returns"
            )
        allowed = "a non-empty string or None" if optional else "a non-empty string"
        raise TypeError(f"{builder}: {param} must be {allowed}, got {value!r}")
