"""Values echoed in error messages: at most ``LIMIT`` characters, then an ellipsis.

``echo`` builds the ``repr`` with ``reprlib`` (a bounded number of items and levels), so even a
value that is huge, or shares one list a billion times over (a YAML alias bomb), costs a few
hundred characters to describe; ``capped`` cuts any text that embeds a value.
"""

from __future__ import annotations

import reprlib
from typing import Final

__all__ = ["LIMIT", "capped", "echo"]

LIMIT: Final = 200

_REPR = reprlib.Repr()
_REPR.maxlevel = 4
_REPR.maxlist = _REPR.maxtuple = _REPR.maxset = _REPR.maxfrozenset = _REPR.maxdeque = 20
_REPR.maxdict = 20
_REPR.maxstring = _REPR.maxlong = _REPR.maxother = LIMIT + 2


def capped(text: str, limit: int = LIMIT) -> str:
    """``text``, or its first ``limit`` characters and ``…`` when it is longer."""
    return text if len(text) <= limit else f"{text[:limit]}…"


def echo(value: object, limit: int = LIMIT) -> str:
    """The ``repr`` of ``value`` for an error message, at most ``limit`` characters (+ ``…``)."""
    if isinstance(value, str):  # the start of a long string, not reprlib's middle cut
        return capped(repr(value[: limit + 1]), limit)
    try:
        text = _REPR.repr(value)
    except ValueError:  # an int too long to convert to text (sys.get_int_max_str_digits)
        return f"<an integer of {value.bit_length() if isinstance(value, int) else '?'} bits>"
    return capped(text, limit)
