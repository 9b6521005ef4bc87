"""entities_in_scope: every entity the output names comes from the approved facts.

keroground's scope rule, as a check: an answer may only name what this request's approved
evidence holds. *Approved* facts are the name-holding facts (a Domain's members, a Ranking's
names, a Table's key column) the check lists in ``approved`` — by default every one the
boundary sees that is neither restricted nor the vocabulary.

Two ways to find the names an output uses:

- ``fields``: output fields holding one name or a list of names; each must be an approved name
  (type-strict; ``case_sensitive=False``, the default, casefolds strings);
- ``text_fields`` with ``vocabulary``: prose is scanned for the members of a closed vocabulary
  (a fact listing every entity that exists: the whole catalogue, every listing, every staff
  member) and for the names of restricted facts; matching is case-folded, word-bounded and
  whitespace-normalised, the longest name wins where names overlap ("North Harbour" before
  "North"); every name found must be approved. A name outside the vocabulary is invisible in
  prose: that is what a closed vocabulary means (``entities_recorded`` on a declared field, or
  ``no_restricted_values``, cover the rest).

The whole answer: ``text_fields=["*"]`` scans the whole answer — the output may then be a
``str`` (the whole answer text, reported as field ``*``) or a mapping (every string in it,
each under its path). ``fields``, and any named text field, read a JSON answer: a ``str``
output is then a TypeError.

A name that belongs to a restricted fact fails as ``restricted_entity`` and is never repeated
in the finding; any other unapproved name is ``out_of_scope``.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from groundplane_otel._keys import strict_key
from groundplane_otel.checks._base import Answer, NamedCheck, describe, field_value, require_name
from groundplane_otel.checks._cited import cap
from groundplane_otel.checks._memo import derived
from groundplane_otel.checks._output_text import (
    reads_whole_answer,
    require_fields,
    texts_of,
    whole_or_fields,
)
from groundplane_otel.checks._text import PhraseIndex, normalize
from groundplane_otel.checks._twin import twin
from groundplane_otel.errors import UnsupportedClaim
from groundplane_otel.facts import Domain, Fact, Ranking, Table
from groundplane_otel.registry import FactRegistry

__all__ = ["check_entities_in_scope", "entities_in_scope"]

_BUILDER = "entities_in_scope"
_SHOWN = 20
Names = Domain | Ranking | Table


def _names(value: Names) -> Iterable[Hashable]:
    if isinstance(value, Domain):
        return value.names
    if isinstance(value, Ranking):
        return value.names
    return (row[value.key] for row in value.rows)


def _phrases(value: Names) -> PhraseIndex[str]:
    return derived(
        value,
        "scope.phrases",
        lambda: PhraseIndex((n, n) for n in _names(value) if isinstance(n, str)),
    )


@dataclass(frozen=True, slots=True)
class _Scope:
    """The approved names of one evaluation."""

    exact: frozenset[Hashable]
    folded: frozenset[str]
    listing: list[Any]
    first: Fact

    def holds(self, name: Any, case_sensitive: bool) -> bool:
        if isinstance(name, str) and not case_sensitive:
            return name.casefold() in self.folded
        try:
            return strict_key(name) in self.exact
        except TypeError:  # an unhashable claim (a dict) is never a name
            return False


@dataclass(frozen=True, slots=True)
class _EntitiesInScope:
    fields: tuple[str, ...] | None
    text_fields: tuple[str, ...] | None
    vocabulary: str | None
    approved: tuple[str, ...] | None
    case_sensitive: bool

    def __call__(self, registry: FactRegistry, output: Answer) -> None:
        whole = reads_whole_answer(self.fields, self.text_fields)
        fields = {} if whole else whole_or_fields(_BUILDER, 'text_fields=["*"]', output)
        scope = self._scope(registry)
        for name in self.fields or ():
            value = field_value(fields, name)
            items = value if isinstance(value, list) else [value]
            for position, item in enumerate(items):
                label = name if not isinstance(value, list) else f"{name}[{position}]"
                if not scope.holds(item, self.case_sensitive):
                    raise self._fail(registry, scope, label, item, None)
        if self.vocabulary is None:
            return
        vocabulary = _typed(registry, self.vocabulary)
        indexes = [_phrases(vocabulary.value)]
        indexes += [_phrases(registry.peek(n).value) for n in self._restricted_names(registry)]
        for field_name in self.text_fields or ():
            for name, text in texts_of(output, field_name):
                self._scan(registry, scope, indexes, name, text)

    def _scan(
        self,
        registry: FactRegistry,
        scope: _Scope,
        indexes: list[PhraseIndex[str]],
        name: str,
        text: str,
    ) -> None:
        """Every vocabulary (or restricted) name found in ``text`` must be approved."""
        folded = normalize(text)
        hits = sorted(
            (hit for index in indexes for hit in index.find(folded.text)),
            key=lambda hit: (hit.start, -hit.end),
        )
        covered = 0
        for hit in hits:
            if hit.start < covered:
                continue  # inside a longer name already read
            covered = hit.end
            if not scope.holds(hit.payload, case_sensitive=False):
                start, end = folded.span(hit.start, hit.end)
                raise self._fail(registry, scope, name, text[start:end], (start, end), hit.payload)

    def _restricted_names(self, registry: FactRegistry) -> list[str]:
        return [n for n in registry.restricted_names() if isinstance(registry.peek(n).value, Names)]

    def _scope(self, registry: FactRegistry) -> _Scope:
        if self.approved is not None:
            chosen = [_typed(registry, name) for name in self.approved]
        else:
            chosen = [
                registry.peek(name)
                for name in registry.names()
                if name != self.vocabulary
                and not registry.is_restricted(name)
                and isinstance(registry.peek(name).value, Names)
            ]
        if not chosen:
            raise ValueError(
                f"{_BUILDER}: no approved fact holding names is visible to this check; list "
                "one in the boundary's facts (a domain, ranking or table, not restricted)"
            )
        names = [name for stored in chosen for name in _names(stored.value)]
        exact = frozenset(strict_key(name) for name in names)
        folded = frozenset(name.casefold() for name in names if isinstance(name, str))
        shown = names[:_SHOWN] + ([f"… (+{len(names) - _SHOWN} more)"] * (len(names) > _SHOWN))
        return _Scope(exact, folded, shown, chosen[0])

    def _fail(
        self,
        registry: FactRegistry,
        scope: _Scope,
        label: str,
        claimed: Any,
        span: tuple[int, int] | None,
        recorded: Any = None,
    ) -> UnsupportedClaim:
        where = "" if span is None else f" at characters {span[0]}-{span[1]}"
        name_of = claimed if recorded is None else recorded
        for name in self._restricted_names(registry):
            value = registry.peek(name).value
            if isinstance(name_of, str) and any(
                isinstance(n, str) and n.casefold() == name_of.casefold() for n in _names(value)
            ):
                return UnsupportedClaim(
                    label,
                    "<withheld>",
                    "an approved name",
                    fact=name,
                    provenance=registry.peek(name).provenance,
                    reason=f"the output names an entity of restricted fact {name!r}{where}",
                    code="restricted_entity",
                )
        listed = f" in approved fact {self.approved[0]!r}" if self.approved else ""
        return UnsupportedClaim(
            label,
            claimed,
            scope.listing,
            fact=scope.first.name,
            provenance=scope.first.provenance,
            reason=f"{cap(claimed)}{where} is not among the approved names{listed} "
            "(out of scope for this request)",
            code="out_of_scope",
        )


def _typed(registry: FactRegistry, name: str) -> Fact:
    stored = registry.peek(name)
    if not isinstance(stored.value, Names):
        raise TypeError(
            f"{_BUILDER}: fact {name!r} holds no names; record it with record_domain(), "
            "record_ranking() or record_table()"
        )
    return stored


def _spec(
    fields: object, text_fields: object, vocabulary: object, approved: object, case: object
) -> _EntitiesInScope:
    chosen = require_fields(_BUILDER, "fields", fields, optional=True)
    prose = require_fields(_BUILDER, "text_fields", text_fields, optional=True, whole=True)
    require_name(_BUILDER, "vocabulary", vocabulary, optional=True)
    listed = require_fields(_BUILDER, "approved", approved, optional=True)
    if chosen is None and prose is None:
        raise ValueError(
            f"{_BUILDER}: give fields (names) and/or text_fields (prose, with vocabulary); "
            "both are None"
        )
    if (prose is None) != (vocabulary is None):
        raise ValueError(
            f"{_BUILDER}: text_fields and vocabulary go together (prose is scanned for the "
            f"vocabulary's names), got text_fields={cap(text_fields)}, vocabulary={cap(vocabulary)}"
        )
    if listed is not None and vocabulary in listed:
        raise ValueError(f"{_BUILDER}: the vocabulary {vocabulary!r} cannot also be approved")
    if not isinstance(case, bool):
        raise TypeError(f"{_BUILDER}: case_sensitive must be True or False, got {cap(case)}")
    assert vocabulary is None or isinstance(vocabulary, str)
    return _EntitiesInScope(chosen, prose, vocabulary, listed, case)


def entities_in_scope(
    fields: Sequence[str] | None = None,
    *,
    text_fields: Sequence[str] | None = None,
    vocabulary: str | None = None,
    approved: Sequence[str] | None = None,
    case_sensitive: bool = False,
) -> NamedCheck:
    """Every name in ``fields``, and every ``vocabulary`` name in ``text_fields``, is approved.

    ``text_fields=["*"]`` scans the whole answer (a ``str`` output, or every string of a
    mapping). See the module docstring for the rules. Arguments are validated here.
    """
    spec = _spec(fields, text_fields, vocabulary, approved, case_sensitive)
    name = describe(
        _BUILDER,
        fields=None if spec.fields is None else list(spec.fields),
        text_fields=None if spec.text_fields is None else list(spec.text_fields),
        vocabulary=vocabulary,
    )
    needs = (spec.approved or ()) + ((vocabulary,) if vocabulary else ())
    text = reads_whole_answer(spec.fields, spec.text_fields)
    return NamedCheck(name, spec, family=_BUILDER, facts=needs, text=text)


check_entities_in_scope = twin(entities_in_scope)
