"""Reading what an output says, for the checks that scan it: every string and number in the
declared fields (or in the whole output), with a label saying where it is.

Labels are paths into the output (``answer``, ``items[2].name``); a mapping key itself is
yielded too, labelled by its position (``items[2].{key 0}``). Bools and None say nothing and
are skipped.

The output is a mapping (a JSON answer's fields) or a ``str`` (the whole answer text). The
field name ``*`` (``WHOLE``) names the whole answer: a ``str`` is read as it is; in a mapping,
every string in it, each labelled by its path. A named field of a ``str`` answer is a
TypeError (a field reads JSON; the text has none).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from groundplane_otel._arithmetic import is_number
from groundplane_otel.checks._base import Answer, dotted_leaves, field_value, require_json

__all__ = [
    "WHOLE",
    "Said",
    "require_fields",
    "said_in",
    "strings_in",
    "text_of",
    "texts_of",
    "reads_whole_answer",
    "whole_or_fields",
]

Said = tuple[str, Any, bool]  # (label, a string or a number, is it a mapping key)
WHOLE = "*"
"""The field name of the whole answer (a ``str`` as it is; in a mapping, every string in it)."""


def reads_whole_answer(fields: object, text_fields: tuple[str, ...] | None) -> bool:
    """Does a check read only the whole answer text (no named fields, ``text_fields=["*"]``)?
    Then a ``str`` answer is its input, and a text boundary may use it."""
    return fields is None and text_fields == (WHOLE,)


def whole_or_fields(builder: str, param: str, output: Answer) -> Mapping[str, Any]:
    """The output as fields, for a check reading named fields; a ``str`` answer is then a
    TypeError saying how to read the whole answer text instead (``param``)."""
    return require_json(builder, output, f"; or read the whole answer text with {param}")


def said_in(output: Answer, fields: Sequence[str] | None) -> Iterator[Said]:
    """Every string and number in ``fields`` of ``output`` (all of it when None: a ``str``
    output is one string, labelled ``<output>``), in order; a declared field the output lacks
    is the usual ``field_missing`` claim."""
    if fields is None:
        yield from _walk(output, "")
        return
    assert not isinstance(output, str)  # the caller refused a str with named fields
    for name in fields:
        yield from _walk(field_value(output, name), name)


def strings_in(value: Any, path: str = "") -> Iterator[tuple[str, str]]:
    """Every string inside ``value`` (keys not included), with its dotted path (``*`` for a
    ``str`` value itself)."""
    for where, text in dotted_leaves(value, _is_text, path):
        yield where or WHOLE, text


def _is_text(value: object) -> bool:
    return isinstance(value, str)


def texts_of(output: Answer, name: str) -> Iterator[tuple[str, str]]:
    """(label, text) of a prose field: ``*`` is the whole answer (see the module docstring),
    any other name one field of a mapping (see ``text_of``; the caller refused a ``str``)."""
    if name == WHOLE:
        yield from strings_in(output)
        return
    assert not isinstance(output, str)
    yield name, text_of(output, name)


def _walk(value: Any, at: str) -> Iterator[Said]:
    if isinstance(value, str) or is_number(value):
        yield at or "<output>", value, False
    elif isinstance(value, Mapping):
        for position, (key, item) in enumerate(value.items()):
            label = f"{at}.{key}" if at else str(key)
            if isinstance(key, str) or is_number(key):
                keyed = f"{at}.{{key {position}}}" if at else f"{{key {position}}}"
                yield keyed, key, True
            yield from _walk(item, label)
    elif isinstance(value, (list, tuple)):
        for position, item in enumerate(value):
            yield from _walk(item, f"{at}[{position}]")


def text_of(output: Mapping[str, Any], field: str) -> str:
    """A prose field's text (a missing field is ``field_missing``); a field holding a list
    or an object is read as its strings, one per line."""
    value = field_value(output, field)
    if isinstance(value, str):
        return value
    return "\n".join(str(item) for _, item, _ in _walk(value, field) if isinstance(item, str))


def require_fields(
    builder: str, param: str, fields: object, *, optional: bool, whole: bool = False
) -> tuple[str, ...] | None:
    """Build-time: ``fields`` is None (when optional) or a non-empty list of distinct names;
    with ``whole``, ``["*"]`` (the whole answer) too, never ``*`` beside other names."""
    if fields is None:
        if optional:
            return None
        raise TypeError(f"{builder}: {param} must be a list of output field names, got None")
    if isinstance(fields, (str, bytes)):
        raise TypeError(
            f"{builder}: {param} must be a list of output field names, not a single string "
            f"(did you mean {param}=[{fields!r}]?)"
        )
    if not isinstance(fields, Sequence) or not fields:
        raise TypeError(
            f"{builder}: {param} must be a non-empty list of output field names, got {_cap(fields)}"
        )
    for name in fields:
        if not isinstance(name, str) or not name:
            raise TypeError(
                f"{builder}: every entry of {param} must be a non-empty string, got {_cap(name)}"
            )
    if len(set(fields)) != len(fields):
        raise ValueError(f"{builder}: {param} must not repeat a field, got {_cap(list(fields))}")
    if whole and WHOLE in fields and len(fields) > 1:
        raise ValueError(
            f'{builder}: {param}=["*"] reads the whole answer, which holds every field; '
            f"list either the whole answer or fields, got {_cap(list(fields))}"
        )
    return tuple(fields)


def _cap(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 200 else text[:200] + "…"
