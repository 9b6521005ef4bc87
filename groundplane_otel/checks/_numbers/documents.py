"""Retrieved documents as evidence for ``numbers_recorded``: the numbers their text spells.

Declared, never implied: with ``documents=["kb"]`` a number written in the answer is also
supported when the content of a document of that (unrestricted) Documents fact spells it. The
document text is read by the one prose-number scanner (``prose_scan.scan_numbers``, in the
check's locale: separators, signs, percents, currency amounts, magnitudes, number words, both
ends of a range; dates, times, ordinals, list markers, references and identifiers are not
numbers), and compared by value like a recorded number (``10,000 dollars`` in the document
supports ``$10,000`` and ``10k``; ``3.90%`` supports ``3.9%``; ``two business days`` supports
``2``). Only content is read: a document's id, its retrieval score and the retrieval's other
metadata are never evidence. A restricted Documents fact is never evidence (listing one is a
``ValueError``, a misconfigured boundary), and documents of another request are never visible.

Units: a number written with a unit or currency is supported by a document's number only when
the document writes it without a unit or in one that agrees (``$12`` is not supported by "12
months": ``number_unit_mismatch``, the receipt naming the document); a bare number keeps the
rule above. Conversions are never guessed.

A receipt whose nearest value comes from a document names it (``document``: the document id;
``fact``: the Documents fact), like Groundlens's "nearest in invoice.pdf#p1".
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence
from dataclasses import dataclass, replace
from decimal import Decimal
from typing import Final

from groundplane_otel.checks._numbers.prose_scan import scan_numbers
from groundplane_otel.checks._numbers.recorded import (
    CONTEXT,
    Recorded,
    RecordedNumbers,
    Rounding,
    rounds_to,
)
from groundplane_otel.checks._numbers.units import claimed_unit
from groundplane_otel.documents import Documents
from groundplane_otel.facts import Fact
from groundplane_otel.registry import FactRegistry

__all__ = [
    "DocumentNumbers",
    "WithDocuments",
    "document_numbers",
    "evidence_index",
    "require_documents",
]

_KEY: Final = "numbers_recorded.documents"


@dataclass(frozen=True, slots=True)
class _Spelled:
    """One number a document's content spells: its value and the document holding it."""

    value: Decimal
    document: str


class DocumentNumbers:
    """The numbers the contents of one Documents fact spell, by value (built once per locale
    and kept on the Documents value)."""

    __slots__ = ("_exact", "_units", "_values", "fact")

    def __init__(self, fact: str, documents: Documents, locale: str) -> None:
        exact: dict[Decimal, _Spelled] = {}
        units: dict[Decimal, list[tuple[str | None, str]]] = {}
        for document in documents:
            content = document.content
            if content is None:
                continue
            for numeral in scan_numbers(content, locale).numerals:
                exact.setdefault(numeral.value, _Spelled(numeral.value, document.id))
                units.setdefault(numeral.value, []).append(
                    (claimed_unit(content, numeral), document.id)
                )
        self.fact = fact
        self._exact = exact
        self._units = units
        self._values = sorted(exact)

    def units_of(self, target: Decimal) -> list[tuple[str | None, Recorded]]:
        """Each unit the documents spell ``target`` in (None: written without one), with the
        spelling's record (naming its document)."""
        spelled = self._exact.get(target)
        if spelled is None:
            return []
        record = self._recorded(spelled)
        return [
            (unit, record if document == spelled.document else replace(record, document=document))
            for unit, document in self._units[target]
        ]

    def __bool__(self) -> bool:
        return bool(self._values)

    def _recorded(self, spelled: _Spelled) -> Recorded:
        value = spelled.value
        integral = value == value.to_integral_value(context=CONTEXT)
        native: int | float = int(value) if integral else float(value)
        return Recorded(native, value, self.fact, None, "content", spelled.document)

    def find(self, target: Decimal) -> Recorded | None:
        spelled = self._exact.get(target)
        return None if spelled is None else self._recorded(spelled)

    def rounded(self, target: Decimal, quantum: Decimal, mode: Rounding) -> Recorded | None:
        half = CONTEXT.divide(quantum, 2)
        start = bisect.bisect_left(self._values, CONTEXT.subtract(target, half))
        end = bisect.bisect_right(self._values, CONTEXT.add(target, half))
        for value in self._values[start:end]:
            if rounds_to(value, target, quantum, mode):
                return self._recorded(self._exact[value])
        return None

    def nearest(self, target: Decimal) -> Recorded | None:
        values = self._values
        if not values:
            return None
        position = bisect.bisect_left(values, target)
        candidates = values[max(0, position - 1) : position + 1]
        best = min(candidates, key=lambda value: _distance(value, target))
        return self._recorded(self._exact[best])


class WithDocuments(RecordedNumbers):
    """Recorded numbers plus the numbers some retrieved documents spell: every lookup asks the
    facts first, then the documents (``nearest``: whichever is closer, the facts on a tie)."""

    def __init__(self, facts: Sequence[Fact], documents: Sequence[DocumentNumbers]) -> None:
        super().__init__(facts)
        self._documents = tuple(documents)

    def spelled_units(self, target: Decimal) -> list[tuple[str | None, Recorded]]:
        """The units the documents spell ``target`` in (see ``DocumentNumbers.units_of``)."""
        return [found for spelled in self._documents for found in spelled.units_of(target)]

    def holds(self, target: Decimal) -> bool:
        return super().holds(target) or any(d.find(target) for d in self._documents)

    def find(self, target: Decimal) -> Recorded | None:
        found = super().find(target)
        for spelled in self._documents:
            if found is not None:
                break
            found = spelled.find(target)
        return found

    def rounded(self, target: Decimal, quantum: Decimal, mode: Rounding) -> Recorded | None:
        found = super().rounded(target, quantum, mode)
        for spelled in self._documents:
            if found is not None:
                break
            found = spelled.rounded(target, quantum, mode)
        return found

    def nearest(self, target: Decimal) -> Recorded | None:
        best = super().nearest(target)
        for spelled in self._documents:
            found = spelled.nearest(target)
            if found is not None and (
                best is None or _distance(found.exact, target) < _distance(best.exact, target)
            ):
                best = found
        return best


def _distance(value: Decimal, target: Decimal) -> Decimal:
    return CONTEXT.abs(CONTEXT.subtract(value, target))


def require_documents(builder: str, documents: object) -> tuple[str, ...] | None:
    """Build-time check of ``documents``: None, or a non-empty list of distinct fact names."""
    if documents is None:
        return None
    if isinstance(documents, (str, bytes)) or not isinstance(documents, Sequence) or not documents:
        raise TypeError(
            f"{builder}: documents must be None or a non-empty list of Documents fact names "
            f"(retrievals whose text is evidence), got {documents!r}"
        )
    for name in documents:
        if not isinstance(name, str) or not name:
            raise TypeError(
                f"{builder}: every entry of documents must be a fact name, got {name!r}"
            )
    if len(set(documents)) != len(documents):
        raise ValueError(f"{builder}: documents lists a name twice: {list(documents)!r}")
    return tuple(documents)


def _spelled(registry: FactRegistry, builder: str, name: str, locale: str) -> DocumentNumbers:
    value = registry.peek(name).value
    if not isinstance(value, Documents):
        raise TypeError(
            f"{builder}: documents lists fact {name!r}, which is not retrieved documents; record "
            "it with record_documents() (or declare `kind: documents` in the policy)"
        )
    if registry.is_restricted(name):
        raise ValueError(
            f"{builder}: documents lists fact {name!r}, which is restricted; a restricted "
            "document is never evidence (remove it from documents)"
        )
    return document_numbers(name, value, locale)


def document_numbers(name: str, documents: Documents, locale: str) -> DocumentNumbers:
    """The numbers fact ``name``'s documents spell, built once per locale (kept on the value)."""
    key = (_KEY, name, locale)
    found = documents._derived.get(key)
    if found is None:
        found = documents._derived.setdefault(key, DocumentNumbers(name, documents, locale))
    assert isinstance(found, DocumentNumbers)
    return found


def evidence_index(
    registry: FactRegistry,
    facts: Sequence[Fact],
    documents: tuple[str, ...] | None,
    *,
    builder: str,
    locale: str,
) -> RecordedNumbers:
    """The index a numbers_recorded check reads: the facts' numbers, and with ``documents``
    the numbers those retrieved documents spell."""
    if documents is None:
        return RecordedNumbers(facts)
    return WithDocuments(facts, [_spelled(registry, builder, name, locale) for name in documents])
