"""numbers_recorded's arguments, validated at build time, and reading the texts to scan.

``field`` is None (the whole answer: a str, or every string inside a mapping, under the field
name ``*``), a dotted path (``report.summary``, list indices allowed) or a list of keys (for
keys containing dots). A missing field is ``field_missing``; a non-str one is ``not_text``;
a named field of a ``str`` answer (the whole text, which has no fields) is a TypeError.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from decimal import Decimal
from typing import Any

from groundplane_otel.checks._base import missing_field, require_json, require_name, walk_steps
from groundplane_otel.checks._output_text import WHOLE, strings_in
from groundplane_otel.errors import UnsupportedClaim

__all__ = [
    "WHOLE",
    "facts_argument",
    "field_argument",
    "field_label",
    "negated",
    "read_texts",
    "shifted",
]

_BUILDER = "numbers_recorded"


def shifted(value: Decimal, power: int) -> Decimal:
    """``value`` times 10**power, exactly (no arithmetic context involved)."""
    sign, digits, exponent = value.as_tuple()
    assert isinstance(exponent, int)
    return Decimal((sign, digits, exponent + power))


def negated(value: Decimal) -> Decimal:
    """``-value``, exactly (the thread's decimal context is never used)."""
    sign, digits, exponent = value.as_tuple()
    assert isinstance(exponent, int)
    return Decimal((1 - sign, digits, exponent))


def facts_argument(fact: object, builder: str = _BUILDER) -> tuple[str, ...]:
    """Build-time check of ``fact``: one fact name, or a non-empty list of distinct ones."""
    if isinstance(fact, str):
        require_name(builder, "fact", fact)
        return (fact,)
    if not isinstance(fact, Sequence) or not fact:
        raise TypeError(
            f"{builder}: fact must be a fact name or a non-empty list of them, got {fact!r}"
        )
    for name in fact:
        require_name(builder, "every entry of fact", name)
    if len(set(fact)) != len(fact):
        raise ValueError(f"{builder}: fact lists a name twice: {list(fact)!r}")
    return tuple(fact)


def field_argument(field: object, builder: str = _BUILDER) -> str | tuple[str, ...] | None:
    """Build-time check of ``field``: None, a dotted path, or a non-empty list of keys."""
    if field is None:
        return None
    if isinstance(field, str):
        if not field or "" in field.split("."):
            raise ValueError(
                f"{builder}: field must be a dotted path like 'report.summary', got {field!r}"
            )
        return field
    if isinstance(field, Sequence) and field and all(isinstance(k, str) and k for k in field):
        return tuple(field)
    raise TypeError(
        f"{builder}: field must be None (the whole answer), a dotted path or a non-empty "
        f"list of keys, got {field!r}"
    )


def field_label(field: str | tuple[str, ...] | None) -> str:
    """The field name a claim carries: the path as written, keys joined by dots, or ``*``."""
    if field is None:
        return WHOLE
    return field if isinstance(field, str) else ".".join(field)


def read_texts(output: Any, field: str | tuple[str, ...] | None) -> Iterator[tuple[str, str]]:
    """(where, text) of each text to scan; a missing or non-text field is a claim; a field of
    a ``str`` answer (the whole text: it has no fields) is a TypeError."""
    label = field_label(field)
    if field is None:
        yield from strings_in(output)
        return
    output = require_json(
        f"{_BUILDER}(field={label!r})", output, "; or read the whole answer text with field=None"
    )
    found, current, _ = walk_steps(
        output, tuple(field.split(".")) if isinstance(field, str) else field
    )
    if not found:
        raise missing_field(label)
    if not isinstance(current, str):
        raise UnsupportedClaim(
            label,
            current,
            "a text",
            reason=f"{type(current).__name__} is not prose; a prose check reads a str",
            code="not_text",
        )
    yield label, current
