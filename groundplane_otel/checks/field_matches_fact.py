"""field_matches_fact: an output field must equal a registered value, structurally and exactly.

Equality is structural: numbers compare by value (3 equals 3.0, ``[1, 2.0]`` equals ``[1, 2]``),
as in every numeric check; a bool is never a number, a list is not a tuple, and mapping keys
compare type-strictly ({1: …} is not {"1": …}, nor {1.0: …}). The comparison is
against the value *as recorded*: ``record`` keeps a tuple a tuple, so a fact recorded as a tuple
never equals the list a JSON output carries — record JSON-shaped facts as lists. There is no
numeric tolerance: for numbers computed from data, use the numeric checks.

Evaluation order: the fact must be a plain value (``record()``) → ``path`` must exist in it (a
ValueError otherwise: a misconfigured check) → the field must be present → equal.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, cast

from groundplane_otel._arithmetic import is_number
from groundplane_otel._keys import strict_key, value_equal
from groundplane_otel.checks._base import (
    Answer,
    NamedCheck,
    ValuePath,
    as_path,
    describe,
    field_value,
    path_text,
    require_json,
    walk_steps,
)
from groundplane_otel.checks._names import kind_of
from groundplane_otel.checks._ranked import offset, quote_names, require_name
from groundplane_otel.checks._twin import twin
from groundplane_otel.errors import UnsupportedClaim
from groundplane_otel.facts import Domain, Ranking, Table
from groundplane_otel.registry import FactRegistry

__all__ = ["check_field_matches_fact", "field_matches_fact"]

_BUILDER = "field_matches_fact"


@dataclass(frozen=True, slots=True)
class _FieldMatchesFact:
    """The validated configuration of one field_matches_fact check; calling it runs it."""

    field: str
    fact: str
    path: ValuePath = ()

    def __post_init__(self) -> None:
        require_name(_BUILDER, "field", self.field)
        require_name(_BUILDER, "fact", self.fact)
        object.__setattr__(self, "path", as_path(_BUILDER, self.path))

    def __call__(self, registry: FactRegistry, output: Answer) -> None:
        output = require_json(_BUILDER, output)
        stored = registry.peek(self.fact)
        expected = self._expected(stored.value)
        claimed = field_value(output, self.field)
        if value_equal(claimed, expected):
            return
        what = "the recorded value" if not self.path else f"the fact's {path_text(self.path)!r}"
        raise UnsupportedClaim(
            self.field,
            claimed,
            expected,
            fact=self.fact,
            provenance=stored.provenance,
            reason=f"{what} differs: {_difference(claimed, expected)}",
            code="value_mismatch",
        )

    def _expected(self, value: Any) -> Any:
        """The fact's value, or the part of it ``path`` names."""
        if isinstance(value, (Ranking, Table, Domain)):
            raise TypeError(
                f"{_BUILDER}: fact {self.fact!r} is {kind_of(value)}; this check "
                "compares a plain value recorded with record() (use superlative, row_integrity, "
                "aggregate_reconciles or entities_recorded for typed facts)"
            )
        found, expected, depth = walk_steps(value, self.path)
        if not found:
            raise ValueError(
                f"{_BUILDER}: fact {self.fact!r} has no path {path_text(self.path)!r}"
                f"{_stopped(value, self.path, depth)}"
            )
        return expected


def _stopped(value: Any, path: ValuePath, depth: int) -> str:
    """`` (no 'q4' under 'totals', a dict with keys 'q1', 'q2')``: where the path ran out."""
    _, parent, _ = walk_steps(value, path[:depth])
    part = path[depth]
    above = "the value" if depth == 0 else repr(path_text(path[:depth]))
    if isinstance(parent, Mapping):
        return f" (no {part!r} under {above}, a mapping with keys {quote_names(list(parent))})"
    if isinstance(parent, (list, tuple)):
        return f" (no {part!r} under {above}, {kind_of(parent)} of {len(parent)})"
    return f" (no {part!r} under {above}, {kind_of(parent)})"


def _difference(claimed: Any, expected: Any, at: str = "") -> str:
    """The first place where ``claimed`` and ``expected`` differ, said plainly."""
    where = f"at {at}: " if at else ""
    if is_number(claimed) and is_number(expected):
        return f"{where}{claimed!r} is off by {offset(claimed, expected)} from {expected!r}"
    if type(claimed) is not type(expected):
        note = ""
        if isinstance(claimed, list) and isinstance(expected, tuple):
            note = " (lists are not tuples; record JSON-shaped facts as lists)"
        elif isinstance(claimed, bool) or isinstance(expected, bool):
            note = " (a bool is never a number)"
        elif isinstance(claimed, str) and is_number(expected):
            note = " (numeric-looking strings are never numbers)"
        return (
            f"{where}the model wrote {kind_of(claimed)} ({claimed!r}), the fact holds "
            f"{kind_of(expected)} ({expected!r}){note}"
        )
    if isinstance(expected, dict):
        return where + _mapping_difference(claimed, expected, at)
    if isinstance(expected, (list, tuple)):
        if len(claimed) != len(expected):
            return f"{where}{len(claimed)} items, the fact has {len(expected)}"
        for position, (left, right) in enumerate(zip(claimed, expected, strict=True)):
            if not value_equal(left, right):
                return _difference(left, right, f"{at}[{position}]")
    return f"{where}{claimed!r} is not {expected!r}"


def _mapping_difference(claimed: dict[Any, Any], expected: dict[Any, Any], at: str) -> str:
    """Missing keys, extra keys, or the first key whose values differ (keys type-strict)."""
    have = {strict_key(key): key for key in claimed}
    want = {strict_key(key): key for key in expected}
    missing = [key for token, key in want.items() if token not in have]
    extra = [key for token, key in have.items() if token not in want]
    if missing or extra:
        parts = []
        if missing:
            parts.append(f"the output lacks key(s) {quote_names(missing)}")
        if extra:
            parts.append(f"has unrecorded key(s) {quote_names(extra)}")
        return "; ".join(parts) + " (keys compare type-strictly)"
    for token, key in want.items():
        left = claimed[have[token]]
        if not value_equal(left, expected[key]):
            return _difference(left, expected[key], f"{at}[{key!r}]")
    return "they differ"  # pragma: no cover - only called when strict_equal said so


def field_matches_fact(
    field: str, fact: str, path: str | Sequence[Hashable] | None = ()
) -> NamedCheck:
    """``output[field]`` must equal the value recorded as ``fact`` (or the part ``path`` names).

    Structural: numbers compare by value (3 equals 3.0), bools are not numbers, lists are not
    tuples, mapping keys compare type-strictly, and the comparison is against the value as
    recorded (a fact recorded as a tuple never equals a JSON list). ``path`` (a dotted string,
    or a sequence of keys; ``()`` is the root; list indices allowed) walks into the *fact*, not
    the output; a path the fact does not have is a ValueError when the check runs. Arguments
    are validated here.
    """
    spec = _FieldMatchesFact(field, fact, cast(ValuePath, path))
    return NamedCheck(
        describe(_BUILDER, fact=fact, field=field), spec, family=_BUILDER, facts=(fact,)
    )


check_field_matches_fact = twin(field_matches_fact)
