"""no_restricted_values: no value of a restricted fact may appear anywhere in the output.

A fact recorded with ``restricted=True`` (or declared ``restricted: true`` in a policy) is
evidence the model may see but must never reveal: an internal cost, a staff name, a customer's
record. The check reads every string, number and mapping key of the declared fields (the
whole output by default) and fails when one reveals any value of a restricted fact
(``_restricted_values`` says what a fact's values are).

The whole answer: with ``fields=None`` (the default) the output may be a mapping (every
string, number and key in it) or a ``str``, the whole answer text (its field is then
``<output>``); named ``fields`` read a JSON answer, so a ``str`` output is a TypeError.

Matching:

- strings and names: case-folded, word-bounded, whitespace-normalised (a line break or extra
  spaces between words change nothing; hyphens, dashes and underscores read as spaces), after
  Unicode NFKC folding and with zero-width characters removed; texts with line breaks are also
  read with hyphenated breaks joined ("Fal-\\ncon") and with every break joined ("Fal\\ncon");
- numbers by value, not by spelling, found by the prose-number scanner of ``numbers_recorded``
  (``_numbers.prose_scan``: the same locales, number words, ranges and rules — dates, times,
  ordinals, list markers, references and identifiers are not numbers): 1234.5 is revealed by 1234.5,
  "1,234.50", "$1,234.5", "1.2345k"; 88 by "eighty-eight"; 1.2 by "1.2M" (the digits before a
  magnitude); 0.0455 by "4.55%" (the ratio a percent spells);
- roundings: a written number whose precision interval holds a restricted value, unless an
  unrestricted recorded value is strictly closer ("$1.2k" reveals 1234.5; salience rules in
  ``_restricted_rounding``);
- restricted documents: the salient names and numbers of their contents, said on their own,
  unless the unrestricted evidence holds them too (``_restricted_terms``).

The finding never carries the value it found (``claimed`` is ``"<withheld>"``; the reason
names the fact, the place in the fact and the character span in the output), so neither the
exception nor telemetry can repeat it. Evaluation order: the restricted facts (``facts``, or
every restricted fact the registry holds: none is a ValueError, a misconfigured boundary) →
the declared fields must be present → each string or number, in output order.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from groundplane_otel.checks._base import Answer, NamedCheck, describe, require_name
from groundplane_otel.checks._numbers.prose_words import LOCALES
from groundplane_otel.checks._output_text import require_fields, said_in, whole_or_fields
from groundplane_otel.checks._public_values import PublicValues
from groundplane_otel.checks._restricted_values import Leak, RestrictedIndex, restricted_index
from groundplane_otel.checks._twin import twin
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
    locale: str

    def __post_init__(self) -> None:
        if self.facts is not None:
            for name in self.facts:
                require_name(_BUILDER, "every entry of facts", name)
        if self.locale not in LOCALES:
            raise ValueError(
                f"{_BUILDER}: locale must be one of {sorted(LOCALES)}, got {self.locale!r}"
            )

    def __call__(self, registry: FactRegistry, output: Answer) -> None:
        if self.fields is not None:
            whole_or_fields(_BUILDER, "fields=None", output)
        indexes = self._indexes(registry)
        public = PublicValues(registry, self.locale)  # read only when a match is in question
        for label, said, is_key in said_in(output, self.fields):
            leak: Leak | None = None
            for index in indexes:
                if isinstance(said, str):
                    leak = index.in_text(said, locale=self.locale, public=public)
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


def _locale(locale: object, decimal: object) -> str:
    """The scanner's locale: ``locale``, or the one ``decimal`` names ("," is ``de``)."""
    if not isinstance(locale, str):
        raise TypeError(f"{_BUILDER}: locale must be one of {sorted(LOCALES)}, got {locale!r}")
    if decimal is None:
        return locale
    if decimal not in (".", ","):
        raise ValueError(f'{_BUILDER}: decimal must be "." or ",", got {decimal!r}')
    if locale == "en" and decimal == ",":
        return "de"
    if locale in LOCALES and LOCALES[locale].decimal != decimal:
        raise ValueError(
            f"{_BUILDER}: decimal={decimal!r} contradicts locale={locale!r}, whose decimal "
            f"mark is {LOCALES[locale].decimal!r}; give the locale alone"
        )
    return locale


def _spec(fields: object, facts: object, locale: object, decimal: object) -> _NoRestrictedValues:
    chosen = require_fields(_BUILDER, "fields", fields, optional=True)
    listed = require_fields(_BUILDER, "facts", facts, optional=True)
    return _NoRestrictedValues(chosen, listed, _locale(locale, decimal))


def no_restricted_values(
    fields: Sequence[str] | None = None,
    *,
    facts: Sequence[str] | None = None,
    locale: str = "en",
    decimal: str | None = None,
) -> NamedCheck:
    """No value of a restricted fact may appear in the output ``fields`` (default: anywhere —
    every string, number and key of a mapping, or the whole answer text when the output is a
    ``str``; named fields read a JSON answer and refuse a ``str`` with TypeError).

    ``facts``: the restricted facts to look for (default: every restricted fact the boundary
    sees; each listed fact must be restricted). ``locale`` (``en``/``de``/``fr``/``ch``, as in
    ``numbers_recorded``) names the separators of numbers in text; ``decimal=","`` is short
    for ``locale="de"`` ("1.234,5"), ``decimal="."`` for ``"en"``. Validated here.
    """
    spec = _spec(fields, facts, locale, decimal)
    name = describe(
        _BUILDER,
        fields=None if spec.fields is None else list(spec.fields),
        facts=None if spec.facts is None else list(spec.facts),
    )
    return NamedCheck(name, spec, family=_BUILDER, facts=spec.facts or (), text=spec.fields is None)


check_no_restricted_values = twin(no_restricted_values)
