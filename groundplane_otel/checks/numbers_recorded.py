"""numbers_recorded: every number in a prose field is a number the facts record, exactly.

The prose-side twin of ``entities_recorded``: a right winner wrapped in a wrong number fails.
Each numeral of the text (see ``_numbers.prose_scan`` for what is read as a number and the
explicit rules for dates, times, years, ordinals, list markers, references and identifiers)
must read exactly
as a recorded number (see ``_numbers.recorded``: ints exactly, floats by their shortest repr),
compared as decimals — ``1.20`` is 1.2, ``10,000`` is not ``1,000``, ``-3.2`` is not ``3.2``.

Rank claims: when ``fact`` lists a Ranking, an ordinal, rank number or superlative tied to an
entity it names ("North was third", "ranked #2", "the top 3 were …") must hold against it;
against a Table, a claim naming one of its numeric columns (or a declared alias: ``aliases=``)
must hold against the rows ranked by it ("Elm was second on revenue"; see ``_numbers.ordinals``
and ``_numbers.rank_scope``). A contradicted rank is a ``RankReceipt`` in the same claim.

Declared options, never implied (all off by default):

- ``percent_as_ratio=True``: ``4.55%`` may also stand for a recorded 0.0455.
- ``rounding="half_even"`` / ``"half_up"`` (half away from zero): a number may be a display
  rounding of a recorded value to the precision written (``1.2M`` of 1,234,567; ``4.6%`` of
  4.55 half-even). The precision is the last digit written (``10,000`` is exact to the unit).
- ``question_fact="q"``: numbers that also appear in the question (a str fact) are echoes, not
  support: an echo no fact records fails with ``number_echo_only``.
- ``years="skip"``: a bare four-digit integer 1900 to 2100 is a year, not checked.
- ``documents=["kb"]``: the text of those retrieved documents is evidence too (a number the
  content of one spells is supported; ids, scores and restricted documents never are): see
  ``_numbers.documents``.
- ``units={"change": "pp", "revenue": "USD"}``: a number written in another unit than its
  column declares is ``number_unit_mismatch`` (``_numbers.units``; undeclared: as before).
- ``changes=["margin"]``: columns holding changes, besides those the direction rule finds by
  name or sign (``_numbers.direction``).

Always on: a direction word bound to a number carries its sign (``fell 3.2%`` is -3.2; a rise
said of a recorded fall is ``number_direction_false``; see ``_numbers.wording``).

The whole answer: with ``field=None`` (the default) the output may be the whole answer text (a
``str``: claims carry the field ``*``) or a mapping (every string in it, each under its path);
a named ``field`` reads a JSON answer, so a ``str`` output is a TypeError.

Evaluation order: the field must be present and a str → scan it → bind direction words → each
numeral, in text order: its declared unit, then its direction, are judged (``_numbers.wording``)
→ it must be recorded, signed by its direction (either form when ``percent_as_ratio``; a rounding
when ``rounding``). Every refused numeral gets a receipt; the claim (``UnrecordedNumbers``)
carries them all.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any, get_args

from groundplane_otel.checks._base import NamedCheck, describe, require_name
from groundplane_otel.checks._numbers.direction import bind
from groundplane_otel.checks._numbers.documents import evidence_index, require_documents
from groundplane_otel.checks._numbers.ordinals import RankScope, rank_receipts
from groundplane_otel.checks._numbers.prose_fields import (
    facts_argument,
    field_argument,
    field_label,
    negated,
    read_texts,
    shifted,
)
from groundplane_otel.checks._numbers.prose_scan import Numeral, Years, scan_numbers, scanner
from groundplane_otel.checks._numbers.prose_words import LOCALES
from groundplane_otel.checks._numbers.rank_scope import Aliases, declared_aliases
from groundplane_otel.checks._numbers.receipts import NumberReceipt, UnrecordedNumbers
from groundplane_otel.checks._numbers.recorded import Recorded, RecordedNumbers, Rounding
from groundplane_otel.checks._numbers.units import declared_units
from groundplane_otel.checks._numbers.wording import SUPPORTED, Refusal, judge
from groundplane_otel.checks._output_text import WHOLE
from groundplane_otel.checks._twin import twin
from groundplane_otel.registry import FactRegistry

__all__ = [
    "NumberReceipt",
    "UnrecordedNumbers",
    "check_numbers_recorded",
    "numbers_recorded",
    "scan_numbers",
]

_BUILDER = "numbers_recorded"


@dataclass(frozen=True, slots=True)
class _NumbersRecorded:
    """The validated configuration of one numbers_recorded check; calling it runs the check."""

    facts: tuple[str, ...]
    field: str | tuple[str, ...] | None = None
    locale: str = "en"
    percent_as_ratio: bool = False
    rounding: Rounding | None = None
    question_fact: str | None = None
    years: Years = "check"
    documents: tuple[str, ...] | None = None
    units: tuple[tuple[str, str], ...] = ()
    changes: frozenset[str] = frozenset()
    aliases: Aliases = ()

    def __post_init__(self) -> None:
        if not isinstance(self.locale, str) or self.locale not in LOCALES:
            raise ValueError(
                f"{_BUILDER}: locale must be one of {sorted(LOCALES)}, got {self.locale!r}"
            )
        if not isinstance(self.percent_as_ratio, bool):
            raise TypeError(
                f"{_BUILDER}: percent_as_ratio must be True or False, got {self.percent_as_ratio!r}"
            )
        if self.rounding is not None and self.rounding not in get_args(Rounding):
            raise ValueError(
                f'{_BUILDER}: rounding must be None, "half_even" or "half_up", '
                f"got {self.rounding!r}"
            )
        require_name(_BUILDER, "question_fact", self.question_fact, optional=True)
        if self.question_fact in self.facts:
            raise ValueError(
                f"{_BUILDER}: question_fact {self.question_fact!r} is also listed in fact; "
                "the question is not a source"
            )
        if self.years not in get_args(Years):
            raise ValueError(f'{_BUILDER}: years must be "check" or "skip", got {self.years!r}')
        if self.question_fact in (self.documents or ()):
            raise ValueError(
                f"{_BUILDER}: question_fact {self.question_fact!r} is also listed in documents; "
                "the question is not a source"
            )

    @property
    def label(self) -> str:
        return field_label(self.field)

    def __call__(self, registry: FactRegistry, output: Mapping[str, Any] | str) -> None:
        self.for_registry(registry)(registry, output)

    def for_registry(self, registry: FactRegistry) -> _Prepared:
        """This check against ``registry`` (read-only while it is used), its per-registry
        setup done once: a stream gate runs it on every release unit of an answer."""
        stored = tuple(registry.peek(name) for name in self.facts)
        return _Prepared(self, registry, stored, self._echoes(registry))

    def _echoes(self, registry: FactRegistry) -> frozenset[Decimal]:
        if self.question_fact is None:
            return frozenset()
        question = registry.peek(self.question_fact).value
        if not isinstance(question, str):
            raise TypeError(
                f"{_BUILDER}: question_fact {self.question_fact!r} must hold the question text "
                f"(a str), got a {type(question).__name__}"
            )
        found = scan_numbers(question, self.locale, years=self.years).numerals
        return frozenset(numeral.value for numeral in found)

    def _readings(self, numeral: Numeral) -> list[tuple[Decimal, Decimal]]:
        """(value, quantum) of each declared reading of the numeral."""
        readings = [(numeral.value, numeral.quantum)]
        if numeral.percent and self.percent_as_ratio:
            readings.append((shifted(numeral.value, -2), shifted(numeral.quantum, -2)))
        return readings

    def _supported(self, index: RecordedNumbers, numeral: Numeral) -> bool:
        readings = self._readings(numeral)
        if any(index.holds(value) for value, _ in readings):
            return True
        rounding = self.rounding
        return rounding is not None and any(
            index.rounded(value, quantum, rounding) is not None for value, quantum in readings
        )

    def _diagnosis(
        self, index: RecordedNumbers, value: Decimal, quantum: Decimal, percent: bool
    ) -> tuple[str, Recorded | None]:
        """The reason code of an unrecorded value, and the recorded value it relates to (the
        first relation that holds, in the documented order), else the nearest one."""
        if value and (found := index.find(negated(value))) is not None:
            return "number_sign_flipped", found
        ratio = percent and not self.percent_as_ratio
        if ratio and (found := index.find(shifted(value, -2))) is not None:
            return "number_ratio_undeclared", found
        if self.rounding is None:
            found = index.rounded(value, quantum, "half_even") or index.rounded(
                value, quantum, "half_up"
            )
            if found is not None:
                return "number_rounding_undeclared", found
        if (found := index.scaled(value)) is not None:
            return "number_scale_mismatch", found
        return "number_unrecorded", index.nearest(value)

    def _receipt(
        self,
        index: RecordedNumbers,
        numeral: Numeral,
        where: str,
        echoes: frozenset[Decimal],
        seen: dict[tuple[Decimal, Decimal, bool], tuple[str, Recorded | None]],
    ) -> NumberReceipt:
        """Why the numeral is not recorded, with the recorded value a reviewer should open
        (``seen``: the diagnoses of this call, so a repeated number is diagnosed once)."""
        value = numeral.value
        key = (value, numeral.quantum, numeral.percent)
        if key not in seen:
            seen[key] = self._diagnosis(index, value, numeral.quantum, numeral.percent)
        code, found = seen[key]
        echo = value in echoes
        return NumberReceipt(
            numeral.text,
            numeral.start,
            numeral.end,
            value,
            "number_echo_only" if echo else code,
            where,
            nearest=None if found is None else found.value,
            fact=None if found is None else found.fact,
            row=None if found is None else found.row,
            column=None if found is None else found.column,
            echo=echo,
            document=None if found is None else found.document,
        )


def _refused(numeral: Numeral, where: str, refusal: Refusal) -> NumberReceipt:
    """The receipt of a numeral whose direction or unit contradicts a recorded value."""
    record = refusal.record
    return NumberReceipt(
        numeral.text,
        numeral.start,
        numeral.end,
        numeral.value,
        refusal.code,
        where,
        nearest=record.value,
        fact=record.fact,
        row=record.row,
        column=record.column,
        expected=refusal.expected,
        document=record.document,
    )


def _changes(changes: object) -> frozenset[str]:
    """Build-time check of ``changes``: a list of column names."""
    if isinstance(changes, str) or not isinstance(changes, Sequence):
        raise TypeError(f"{_BUILDER}: changes must be a list of column names, got {changes!r}")
    for column in changes:
        if not isinstance(column, str) or not column:
            raise TypeError(f"{_BUILDER}: changes must list column names, got {column!r}")
    return frozenset(changes)


def _spec(
    fact: str | Sequence[str],
    field: str | Sequence[str] | None,
    locale: str,
    percent_as_ratio: bool,
    rounding: Rounding | None,
    question_fact: str | None,
    years: Years,
    documents: Sequence[str] | None = None,
    units: Mapping[str, str] | None = None,
    changes: Sequence[str] = (),
    aliases: Mapping[str, Sequence[str]] | None = None,
) -> _NumbersRecorded:
    return _NumbersRecorded(
        facts_argument(fact),
        field_argument(field),
        locale=locale,
        percent_as_ratio=percent_as_ratio,
        rounding=rounding,
        question_fact=question_fact,
        years=years,
        documents=require_documents(_BUILDER, documents),
        units=tuple(declared_units(_BUILDER, units).items()),
        changes=_changes(changes),
        aliases=declared_aliases(_BUILDER, aliases),
    )


def numbers_recorded(
    fact: str | Sequence[str],
    field: str | Sequence[str] | None = None,
    locale: str = "en",
    percent_as_ratio: bool = False,
    rounding: Rounding | None = None,
    question_fact: str | None = None,
    years: Years = "check",
    documents: Sequence[str] | None = None,
    units: Mapping[str, str] | None = None,
    changes: Sequence[str] = (),
    aliases: Mapping[str, Sequence[str]] | None = None,
) -> NamedCheck:
    """Every number in ``output[field]`` (prose) must be one ``fact`` records, exactly.

    ``fact`` is one fact name or a list of them (the facts the text may draw on: Table cells,
    Ranking scores, numbers in a value, the tool's arguments). ``field`` is a dotted path or a
    list of keys into the output; None scans the whole answer (a str, or every string in it;
    a named field of a str output is a TypeError).
    ``locale`` (``en``/``de``/``fr``/``ch``) names the separators. ``percent_as_ratio``,
    ``rounding``, ``question_fact``, ``years`` and ``documents`` (retrieved documents whose
    text is evidence) are declared options, off by default (see the module docstring).
    ``units`` maps columns (or facts) to the unit they are in; ``changes`` lists columns
    holding changes; ``aliases`` maps a column (or fact) to the words a rank claim may name
    it by ("sales", "busiest"). Unrecorded numbers raise ``UnrecordedNumbers`` with one
    receipt each.
    """
    spec = _spec(
        fact,
        field,
        locale,
        percent_as_ratio,
        rounding,
        question_fact,
        years,
        documents,
        units,
        changes,
        aliases,
    )
    shown: Any = spec.facts[0] if len(spec.facts) == 1 else list(spec.facts)
    name = describe(_BUILDER, fact=shown, field=spec.label)
    extra = [doc for doc in spec.documents or () if doc not in spec.facts]
    needs = spec.facts + ((question_fact,) if question_fact else ()) + tuple(extra)
    return NamedCheck(name, spec, family=_BUILDER, facts=needs, text=spec.field is None)


check_numbers_recorded = twin(numbers_recorded)


class _Prepared:
    """A numbers_recorded check bound to one registry (``_NumbersRecorded.for_registry``): the
    facts and echoes read once, the evidence index built on first need and kept.
    Calling it runs the check on ``output`` (the ``registry`` argument is the one it was
    prepared for)."""

    __slots__ = ("_index", "check", "echoes", "registry", "scan", "stored", "units")

    def __init__(
        self,
        check: _NumbersRecorded,
        registry: FactRegistry,
        stored: tuple[Any, ...],
        echoes: frozenset[Decimal],
    ) -> None:
        self.check, self.registry, self.stored = check, registry, stored
        self.echoes = echoes
        self.units = dict(check.units)  # read only
        self.scan = scanner(check.locale, years=check.years)
        self._index: RecordedNumbers | None = None

    def _evidence(self) -> RecordedNumbers:
        if self._index is None:
            check = self.check
            self._index = evidence_index(
                self.registry, self.stored, check.documents, builder=_BUILDER, locale=check.locale
            )
        return self._index

    def __call__(self, registry: FactRegistry, output: Mapping[str, Any] | str) -> None:
        check = self.check
        receipts: list[NumberReceipt] = []
        seen: dict[tuple[Decimal, Decimal, bool], tuple[str, Recorded | None]] = {}
        units = self.units
        texts = (
            ((WHOLE, output),)  # what read_texts yields for it, without the generators
            if check.field is None and type(output) is str
            else read_texts(output, check.field)
        )
        for where, text in texts:
            ranks = RankScope.of(self.stored, check.aliases, text)  # Rankings, Tables' columns
            misranked, read = rank_receipts(ranks, text, where) if ranks else ([], [])
            numerals = self.scan(text).numerals
            bound = bind(text, numerals) if numerals else {}
            for position, numeral in enumerate(numerals):
                if read and any(a <= numeral.start < b for a, b in read):
                    continue  # "top 3", "No. 1": a rank claim, read against the ranking
                index = self._index if self._index is not None else self._evidence()
                judged = judge(
                    text, numeral, bound.get(position), index, check, units, check.changes
                )
                if judged == SUPPORTED:
                    continue
                if isinstance(judged, Refusal):
                    receipts.append(_refused(numeral, where, judged))
                    continue
                claim = numeral if judged is None else judged
                if not check._supported(index, claim):
                    receipts.append(check._receipt(index, claim, where, self.echoes, seen))
            receipts.extend(misranked)
        if not receipts:
            return
        fact = receipts[0].fact or (check.facts[0] if len(check.facts) == 1 else None)
        provenance = None if fact is None else self.registry.peek(fact).provenance
        raise UnrecordedNumbers(check.label, receipts, fact=fact, provenance=provenance)
