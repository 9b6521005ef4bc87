"""no_restricted_values: no value of a restricted fact may appear anywhere in the output.

A fact recorded with ``restricted=True`` (or declared ``restricted: true`` in a policy) is
evidence the model may see but must never reveal: an internal cost, a staff name, a customer's
record. The check reads every string, number and mapping key of the declared fields (the
whole output by default) and fails when one reveals any value of a restricted fact
(``_restricted_values`` says what a fact's values are):

- strings and names: case-folded, word-bounded, whitespace-normalised (a line break or extra
  spaces between words change nothing; hyphens, dashes and underscores read as spaces), after
  Unicode NFKC folding and with zero-width characters removed; texts with line breaks are also
  read with hyphenated breaks joined ("Fal-\\ncon") and with every break joined ("Fal\\ncon");
- numbers by value, not by spelling: 1234.5 is revealed by 1234.5, "1,234.50", "$1,234.5",
  "1.2345k"; 0.0455 by "4.55%" (see ``_prose_numbers``).

The finding never carries the value it found (``claimed`` is ``"<withheld>"``; the reason
names the fact, the place in the fact and the character span in the output), so neither the
exception nor telemetry can repeat it. Evaluation order: the restricted facts (``facts``, or
every restricted fact the registry holds: none is a ValueError, a misconfigured boundary) →
the declared fields must be present → each string or number, in output order.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from groundplane_otel.checks._base import NamedCheck, describe, require_name
from groundplane_otel.checks._output_text import require_fields, said_in
from groundplane_otel.checks._restricted_values import Leak, RestrictedIndex, restricted_index
from groundplane_otel.errors import UnsupportedClaim
from groundplane_otel.registry import FactRegistry

__all__ = ["WITHHELD", "check_no_restricted_values", "no_restricted_values"]

_BUILDER = "no_restricted_values"
WITHHELD = "<withheld>"
"""What a finding says the model wrote: the restricted value itself is never repeated."""


@dataclass(frozen=True, slots=True)
class _NoRestrictedValues:
    fields: tuple[str, ...] | None
    facts: tuple[str, ...] | None
    decimal: str

    def __post_init__(self) -> None:
        if self.facts is not None:
            for name in self.facts:
                require_name(_BUILDER, "every entry of facts", name)
        if self.decimal not in (".", ","):
            raise ValueError(f'{_BUILDER}: decimal must be "." or ",", got {self.decimal!r}')

    def __call__(self, registry: FactRegistry, output: Mapping[str, Any]) -> None:
        indexes = self._indexes(registry)
        for label, said, is_key in said_in(output, self.fields):
            leak: Leak | None = None
            for index in indexes:
                if isinstance(said, str):
                    leak = index.in_text(said, decimal=self.decimal)
                else:
                    where = index.number(said)
                    leak = None if where is None else Leak(where, 0, 0, "as a number")
                if leak is not None:
                    break
            if leak is None:
                continue
            top = label.split(".", 1)[0].split("[", 1)[0]
            if self.fields is None and (
                (is_key and top.startswith("{key")) or any(index.in_text(top) for index in indexes)
            ):
                top = "<output>"  # a key the model chose may itself be the leak: never echo it
            length = len(said) if isinstance(said, str) else None
            raise _leaked(registry, top, is_key, leak, length)

    def _indexes(self, registry: FactRegistry) -> list[RestrictedIndex]:
        if self.facts is None:
            names = registry.restricted_names()
            if not names:
                raise ValueError(
                    f"{_BUILDER}: no restricted fact is visible to this check; record one with "
                    "restricted=True (or declare `restricted: true` in the policy) and list it "
                    "in the boundary's facts"
                )
        else:
            names = list(self.facts)
            for name in names:
                registry.peek(name)  # UnregisteredFact when absent
                if not registry.is_restricted(name):
                    raise ValueError(
                        f"{_BUILDER}: fact {name!r} is not restricted; record it with "
                        "restricted=True (or declare `restricted: true` in the policy)"
                    )
        return [restricted_index(name, registry.peek(name).value) for name in names]


def _leaked(
    registry: FactRegistry, top: str, is_key: bool, leak: Leak, length: int | None
) -> UnsupportedClaim:
    where = leak.where
    what = "a mapping key" if is_key else ("a number" if length is None else "a string")
    span = "" if length is None else f" at characters {leak.start}-{leak.end}"
    return UnsupportedClaim(
        top,
        WITHHELD,
        "no value of a restricted fact",
        fact=where.fact,
        provenance=registry.peek(where.fact).provenance,
        reason=(
            f"the output reveals a value of restricted fact {where.fact!r} ({where.locator}) "
            f"{leak.how}, in {what}{span} of field {top!r}"
        ),
        code="restricted_value",
    )


def _spec(fields: object, facts: object, decimal: object) -> _NoRestrictedValues:
    chosen = require_fields(_BUILDER, "fields", fields, optional=True)
    listed = require_fields(_BUILDER, "facts", facts, optional=True)
    if not isinstance(decimal, str):
        raise TypeError(f'{_BUILDER}: decimal must be "." or ",", got {decimal!r}')
    return _NoRestrictedValues(chosen, listed, decimal)


def no_restricted_values(
    fields: Sequence[str] | None = None,
    *,
    facts: Sequence[str] | None = None,
    decimal: str = ".",
) -> NamedCheck:
    """No value of a restricted fact may appear in the output ``fields`` (default: anywhere).

    ``facts``: the restricted facts to look for (default: every restricted fact the boundary
    sees; each listed fact must be restricted). ``decimal``: the decimal separator of numbers
    in text ("." reads "1,234.5"; "," reads "1.234,5"). Arguments are validated here.
    """
    spec = _spec(fields, facts, decimal)
    name = describe(
        _BUILDER,
        fields=None if spec.fields is None else list(spec.fields),
        facts=None if spec.facts is None else list(spec.facts),
    )
    return NamedCheck(name, spec, family=_BUILDER, facts=spec.facts or ())


def check_no_restricted_values(
    registry: FactRegistry,
    output: Mapping[str, Any],
    fields: Sequence[str] | None = None,
    *,
    facts: Sequence[str] | None = None,
    decimal: str = ".",
) -> None:
    """Run :func:`no_restricted_values` once, outside a boundary; raises UnsupportedClaim."""
    _spec(fields, facts, decimal)(registry, output)
