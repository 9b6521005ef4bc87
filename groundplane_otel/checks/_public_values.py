"""What the unrestricted evidence of one evaluation holds, weighed against a restricted value.

``no_restricted_values`` asks it two things, only when a restricted match is in question (it is
built lazily, once per check call): whether a term a restricted document's content holds is
also public (a number an unrestricted fact records or an approved document spells; a name an
unrestricted fact holds, or an approved document's text contains, word-bounded and case-folded),
and whether an unrestricted recorded value is strictly closer to a written number than a
restricted value it rounds (the neighbourhood rule of ``_restricted_rounding``).

"Unrestricted evidence" is every fact the check's registry (the boundary's view) holds that is
not restricted: its numbers as ``numbers_recorded`` reads them (``_numbers.recorded``), the
numbers its documents' contents spell (``_numbers.documents``), and its strings.
"""

from __future__ import annotations

from decimal import Decimal

from groundplane_otel.checks._numbers.documents import WithDocuments, document_numbers
from groundplane_otel.checks._numbers.recorded import CONTEXT
from groundplane_otel.checks._restricted_values import values_of
from groundplane_otel.checks._text import PhraseIndex, normalize
from groundplane_otel.documents import Documents
from groundplane_otel.registry import FactRegistry

__all__ = ["PublicValues"]


class PublicValues:
    """The unrestricted numbers and strings of one registry (``_restricted_rounding.Public``)."""

    __slots__ = ("_locale", "_numbers", "_registry", "_strings")

    def __init__(self, registry: FactRegistry, locale: str) -> None:
        self._registry = registry
        self._locale = locale
        self._numbers: WithDocuments | None = None
        self._strings: list[str] | None = None

    def _open(self) -> list[str]:
        return [name for name in self._registry.names() if not self._registry.is_restricted(name)]

    def _index(self) -> WithDocuments:
        if self._numbers is None:
            facts = [self._registry.peek(name) for name in self._open()]
            spelled = [
                document_numbers(fact.name, fact.value, self._locale)
                for fact in facts
                if isinstance(fact.value, Documents)
            ]
            self._numbers = WithDocuments(facts, spelled)
        return self._numbers

    def holds(self, value: Decimal) -> bool:
        """Whether an unrestricted fact records ``value`` or an approved document spells it."""
        return self._index().holds(value)

    def closer(self, written: Decimal, restricted: Decimal) -> bool:
        """Whether an unrestricted value is strictly closer to ``written`` than ``restricted``."""
        nearest = self._index().nearest(written)
        if nearest is None:
            return False
        public = CONTEXT.abs(CONTEXT.subtract(nearest.exact, written))
        return public < CONTEXT.abs(CONTEXT.subtract(restricted, written))

    def names(self, phrase: str) -> bool:
        """Whether an unrestricted string holds ``phrase`` (word-bounded, case-folded)."""
        if self._strings is None:
            self._strings = [
                normalize(leaf).text
                for name in self._open()
                for leaf, _ in values_of(self._registry.peek(name).value)
                if isinstance(leaf, str)
            ]
        index = PhraseIndex([(phrase, True)])
        return any(next(index.find(text), None) is not None for text in self._strings)
