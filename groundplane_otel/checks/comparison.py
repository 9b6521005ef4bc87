"""comparison: recompute the delta between two entities in code as abs, pct, ratio or pp.

``a_field`` and ``b_field`` name output fields holding entity names; each is looked up in the
fact (a Ranking's scores, or a Table's row by key, reading ``column=``). With L and R the values
in ``direction`` order (``a_minus_b``: L=a, R=b), the kinds are abs L-R, pct (L-R)/R*100, ratio
L/R and pp (L-R)*100.

Evaluation order: the fact must be a Ranking or a Table (with ``column=`` for a Table only) → the
three fields must be present → the two entities must differ (``same_entity``) and be in the fact
(``unknown_entity``) → a pct or ratio needs a non-zero base, whatever the claim (``zero_base``) →
the delta must be a number (``not_a_number``) → it must equal the exact delta. A mismatch is
diagnosed by trying, in order, the other direction (``wrong_direction``: a flipped sign or the
two entities swapped, which are the same computation), a pct with its sign flipped
(``wrong_direction``), the other kinds, then the other kinds in the other direction
(``wrong_kind``); anything else is ``value_mismatch`` with the offset.
"""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Literal, NamedTuple, cast, get_args

from groundplane_otel._arithmetic import equals_exact, is_number, matches, validate_tolerances
from groundplane_otel._keys import strict_equal
from groundplane_otel.checks._base import Answer, NamedCheck, describe, field_value, require_json
from groundplane_otel.checks._names import name_index
from groundplane_otel.checks._numbers.sums import offset_text, represent, require_name, show
from groundplane_otel.checks._twin import twin
from groundplane_otel.errors import UnknownColumn, UnsupportedClaim
from groundplane_otel.facts import Fact, Ranking, Table
from groundplane_otel.registry import FactRegistry

__all__ = ["DIRECTIONS", "KINDS", "Direction", "Kind", "check_comparison", "comparison"]

Kind = Literal["abs", "pct", "ratio", "pp"]
Direction = Literal["a_minus_b", "b_minus_a"]
KINDS: tuple[Kind, ...] = get_args(Kind)
DIRECTIONS: tuple[Direction, ...] = get_args(Direction)

_BUILDER = "comparison"
_THE = {
    "abs": "the difference",
    "pct": "the percent change",
    "ratio": "the ratio",
    "pp": "the difference in percentage points",
}
_AS = {
    "abs": "a difference",
    "pct": "a percent change",
    "ratio": "a ratio",
    "pp": "percentage points",
}
_HUNDRED = Fraction(100)
_EXACT_FLOATS = 2**53


def delta(kind: Kind, left: Fraction, right: Fraction) -> Fraction | None:
    """The exact delta of ``left`` against ``right``; None when a pct/ratio base is zero."""
    if kind == "abs":
        return left - right
    if kind == "pp":
        return (left - right) * _HUNDRED
    if not right:
        return None
    if kind == "pct":
        return (left - right) / right * _HUNDRED
    return left / right


def _nearest_delta(kind: Kind, left: int | float, right: int | float) -> int | float | None:
    """``from_fraction(delta(kind, left, right))`` in integer arithmetic, without Fractions.

    None when the delta is undefined (a zero base) or no float stands for it (beyond the float
    range, rounding to 0.0, or non-integral at 2**53 and beyond): the caller then takes the
    exact path, which says why. The fast path never accepts what the exact rule refuses.
    """
    ln, ld = left.as_integer_ratio()
    rn, rd = right.as_integer_ratio()
    if kind == "ratio":
        num, den = ln * rd, ld * rn
    else:
        num = ln * rd - rn * ld
        if kind == "abs":
            den = ld * rd
        elif kind == "pp":
            num, den = num * 100, ld * rd
        else:  # pct: (L - R) / R * 100
            num, den = num * 100, ld * rn
    if not den:
        return None
    if num % den == 0:
        return num // den
    try:
        nearest = num / den  # int true division is correctly rounded: the nearest float
    except OverflowError:
        return None
    if nearest == 0.0 or abs(nearest) >= _EXACT_FLOATS:
        return None  # no float stands for this non-integral delta: the exact path refuses it
    return nearest


def _formula(kind: Kind, left: Hashable, right: Hashable) -> str:
    lhs, rhs = repr(left), repr(right)
    return {
        "abs": f"{lhs} - {rhs}",
        "pct": f"({lhs} - {rhs}) / {rhs} * 100",
        "ratio": f"{lhs} / {rhs}",
        "pp": f"({lhs} - {rhs}) * 100",
    }[kind]


class _Side(NamedTuple):
    """One entity of the comparison as the fact holds it."""

    name: Hashable
    value: int | float


@dataclass(frozen=True, slots=True)
class _Comparison:
    """A validated comparison check (what the builder and its twin share)."""

    fact: str
    a_field: str
    b_field: str
    delta_field: str
    column: str | None
    kind: Kind
    direction: Direction
    tolerance: int | float
    rel_tolerance: int | float | None

    def __call__(self, registry: FactRegistry, output: Answer) -> None:
        output = require_json(_BUILDER, output)
        stored = registry.peek(self.fact)
        on = self._measure(stored)
        a = field_value(output, self.a_field)
        b = field_value(output, self.b_field)
        claimed = field_value(output, self.delta_field)
        distinct = type(a) is str and type(b) is str and a != b  # two plain names: no doubt
        if not distinct and strict_equal(a, b):
            raise self._claim(
                stored,
                self.b_field,
                b,
                reason=f"{self.a_field!r} and {self.b_field!r} both name {a!r}: a comparison "
                "needs two different entities",
                code="same_entity",
                supported="two different entities",
            )
        a_value = self._value_of(registry, stored, self.a_field, a)
        b_value = self._value_of(registry, stored, self.b_field, b)
        forward = self.direction == "a_minus_b"
        if forward:
            nearest = _nearest_delta(self.kind, a_value, b_value)
        else:
            nearest = _nearest_delta(self.kind, b_value, a_value)
        if nearest is not None and equals_exact(claimed, nearest):
            return  # the common case: no Fraction built, no message formatted
        a_side, b_side = _Side(a, a_value), _Side(b, b_value)
        left, right = (a_side, b_side) if forward else (b_side, a_side)
        exact_left, exact_right = Fraction(left.value), Fraction(right.value)
        computed = delta(self.kind, exact_left, exact_right)
        formula = _formula(self.kind, left.name, right.name)
        if computed is None:
            raise self._claim(
                stored,
                self.delta_field,
                claimed,
                reason=f"the base {right.name!r} is 0 on {on!r}, so {self.kind} {formula} is "
                "undefined: the claim cannot be verified whatever it says",
                code="zero_base",
                supported=f"a {self.kind} against a non-zero base",
            )
        supported = represent(computed, f"fact {self.fact!r}: {self.kind} {formula}")
        computed_text = (
            f"computed {self.kind} {formula} on {on!r} is {show(computed)} with "
            f"{left.name!r} at {left.value!r} and {right.name!r} at {right.value!r}"
        )
        if not is_number(claimed):
            raise self._claim(
                stored,
                self.delta_field,
                claimed,
                reason=f"the claim is not a number ({type(claimed).__name__}); {computed_text}",
                code="not_a_number",
                supported=supported,
            )
        if self._matches(claimed, computed):
            return
        diagnosis, code = self._diagnose(claimed, computed, left, right)
        raise self._claim(
            stored,
            self.delta_field,
            claimed,
            reason=f"{computed_text}; the claim is off by "
            f"{offset_text(claimed, computed)}{diagnosis}",
            code=code,
            supported=supported,
        )

    # -- reading the fact ---------------------------------------------------------------------

    def _measure(self, stored: Fact) -> str:
        """What the compared values measure; misconfiguration is a developer error."""
        value = stored.value
        if isinstance(value, Ranking):
            if self.column is not None:
                raise ValueError(
                    f"fact {self.fact!r} is a Ranking on {value.key!r}; column= applies to "
                    "Tables only"
                )
            return value.key
        if isinstance(value, Table):
            if self.column is None:
                raise ValueError(
                    f"fact {self.fact!r} is a Table: pass column= to say which value to compare"
                )
            if self.column not in value.columns:
                raise UnknownColumn(
                    f"fact {self.fact!r}: unknown column {self.column!r}; "
                    f"columns: {list(value.columns)}",
                    self.column,
                )
            return self.column
        raise TypeError(
            f"fact {self.fact!r} is a {type(value).__name__}; comparison needs a Ranking "
            "(record_ranking()) or a Table (record_table()) with column="
        )

    def _value_of(self, registry: FactRegistry, stored: Fact, field: str, name: Any) -> int | float:
        """The number the fact holds for entity ``name`` (``_measure`` vetted the fact)."""
        value = stored.value
        if isinstance(value, Table):
            row = value.find_row(name)
            if row is not None:
                column = cast(str, self.column)
                if column not in row:
                    raise ValueError(f"fact {self.fact!r}: row {name!r} has no column {column!r}")
                cell = row[column]
                if type(cell) is not int and not is_number(cell):
                    raise ValueError(
                        f"fact {self.fact!r}: column {column!r}, row {name!r}: expected a "
                        f"finite int or float, got {cell!r} ({type(cell).__name__})"
                    )
                number: int | float = cell
                return number
        else:
            position = cast(Ranking, value).find(name)
            if position is not None:
                return cast(Ranking, value).scores[position]
        index = name_index(registry, self.fact, stored)
        hint = index.hint(name)
        raise self._claim(
            stored,
            field,
            name,
            reason=f"{name!r} is not in fact {self.fact!r} ({index.count} names)"
            + (f"; {hint}" if hint else ""),
            code="unknown_entity",
            supported=index.listing(),
        )

    # -- judging ------------------------------------------------------------------------------

    def _matches(self, claimed: int | float, computed: Fraction | None) -> bool:
        return computed is not None and matches(
            claimed, computed, self.tolerance, self.rel_tolerance
        )

    def _diagnose(
        self, claimed: int | float, computed: Fraction, left: _Side, right: _Side
    ) -> tuple[str, str]:
        """The convention the claim does match, tried in a fixed order: (text, reason code)."""
        exact_left, exact_right = Fraction(left.value), Fraction(right.value)
        other = "b_minus_a" if self.direction == "a_minus_b" else "a_minus_b"
        if self._matches(claimed, delta(self.kind, exact_right, exact_left)):
            if self.kind in ("abs", "pp"):
                how = f"the sign is flipped, or {left.name!r} and {right.name!r} are swapped"
            else:
                how = f"{right.name!r} measured against {left.name!r}: the two entities are swapped"
            return f"; the claim matches the delta in the other direction ({other}): {how}", (
                "wrong_direction"
            )
        if self.kind == "pct" and self._matches(claimed, -computed):
            return (
                f"; the claim is the pct with its sign flipped (the base {right.name!r} is right)",
                "wrong_direction",
            )
        for reverse in (False, True):
            for kind in KINDS:
                if kind == self.kind:
                    continue
                lhs, rhs = (exact_right, exact_left) if reverse else (exact_left, exact_right)
                if self._matches(claimed, delta(kind, lhs, rhs)):
                    where = f" in the other direction ({other})" if reverse else ""
                    return (
                        f"; the claim matches {kind}{where}, not {self.kind}: it is "
                        f"{_THE[kind]} given as {_AS[self.kind]}",
                        "wrong_kind",
                    )
        return "", "value_mismatch"

    def _claim(
        self,
        stored: Fact,
        field: str,
        claimed: Any,
        *,
        reason: str,
        code: str,
        supported: Any,
    ) -> UnsupportedClaim:
        return UnsupportedClaim(
            field,
            claimed,
            supported,
            fact=self.fact,
            provenance=stored.provenance,
            reason=reason,
            code=code,
        )


def _validated(
    *,
    fact: str,
    a_field: str,
    b_field: str,
    delta_field: str,
    column: str | None,
    kind: Kind,
    direction: Direction,
    tolerance: int | float,
    rel_tolerance: int | float | None,
) -> _Comparison:
    """Check every argument now (a misconfigured check fails when built, not when run)."""
    require_name(_BUILDER, "fact", fact)
    require_name(_BUILDER, "a_field", a_field)
    require_name(_BUILDER, "b_field", b_field)
    require_name(_BUILDER, "delta_field", delta_field)
    require_name(_BUILDER, "column", column, optional=True)
    if len({a_field, b_field, delta_field}) != 3:
        raise ValueError(
            f"{_BUILDER}: a_field, b_field and delta_field must be three different fields, got "
            f"{a_field!r}, {b_field!r}, {delta_field!r}"
        )
    if kind not in KINDS:
        raise ValueError(f"{_BUILDER}: kind must be one of {list(KINDS)}, got {kind!r}")
    if direction not in DIRECTIONS:
        raise ValueError(
            f"{_BUILDER}: direction must be one of {list(DIRECTIONS)}, got {direction!r}"
        )
    validate_tolerances(tolerance, rel_tolerance, where=_BUILDER)
    return _Comparison(
        fact, a_field, b_field, delta_field, column, kind, direction, tolerance, rel_tolerance
    )


def comparison(
    fact: str,
    a_field: str,
    b_field: str,
    delta_field: str,
    column: str | None = None,
    kind: Kind = "abs",
    direction: Direction = "a_minus_b",
    tolerance: int | float = 0,
    rel_tolerance: int | float | None = None,
) -> NamedCheck:
    """Recompute a claimed delta between two entities; validated now, run per output."""
    spec = _validated(
        fact=fact,
        a_field=a_field,
        b_field=b_field,
        delta_field=delta_field,
        column=column,
        kind=kind,
        direction=direction,
        tolerance=tolerance,
        rel_tolerance=rel_tolerance,
    )
    return NamedCheck(
        describe(_BUILDER, fact=fact, delta_field=delta_field), spec, family=_BUILDER, facts=(fact,)
    )


check_comparison = twin(comparison)
