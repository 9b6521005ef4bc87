"""A labelled corpus case, how to run one against the checker, and the label oracle.

A case holds everything needed to reproduce it from scratch: the facts to record (kind, name,
data, recorder keywords), the check (builder name and keywords), the model's output, the label
(``supported`` / ``unsupported``), the family and the failure class (``correct:<variant>`` for
supported cases), and the reason code a rejection is expected to carry. A wrong output that no
claim could make right (the exact result has no int or float form) is refused by the checker
with a developer error instead: ``expect_error`` names its type, and only that counts as
rejecting it. ``known_limit`` marks a case the checker gets wrong by design (docs/measured.md
lists it).

The oracle (``truly_matches``) is an independent restatement of the numeric rule (exact
rationals; an int or float claim may equal in value the float nearest to a non-integral exact
value, when that float stands for it; absolute and relative tolerances compared exactly; a
value no float stands for matches nothing). Generators assert their labels with it, so a corpus
bug cannot pass as a checker bug.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from fractions import Fraction
from typing import Any, Literal

from groundplane_otel.boundary import boundary
from groundplane_otel.checks.aggregate_reconciles import aggregate_reconciles
from groundplane_otel.checks.citations_retrieved import citations_retrieved
from groundplane_otel.checks.comparison import comparison
from groundplane_otel.checks.dates_recorded import dates_recorded
from groundplane_otel.checks.entities_in_scope import entities_in_scope
from groundplane_otel.checks.entities_recorded import entities_recorded
from groundplane_otel.checks.field_matches_fact import field_matches_fact
from groundplane_otel.checks.no_restricted_values import no_restricted_values
from groundplane_otel.checks.numbers_recorded import numbers_recorded
from groundplane_otel.checks.quotes_anchored import quotes_anchored
from groundplane_otel.checks.ranking_prefix import ranking_prefix
from groundplane_otel.checks.row_integrity import row_integrity
from groundplane_otel.checks.superlative import superlative
from groundplane_otel.errors import SparseColumnWarning, UnsupportedClaim
from groundplane_otel.registry import FactRegistry

Label = Literal["supported", "unsupported"]

BUILDERS: dict[str, Callable[..., Any]] = {
    "superlative": superlative,
    "ranking_prefix": ranking_prefix,
    "aggregate_reconciles": aggregate_reconciles,
    "entities_recorded": entities_recorded,
    "row_integrity": row_integrity,
    "comparison": comparison,
    "field_matches_fact": field_matches_fact,
    "no_restricted_values": no_restricted_values,
    "entities_in_scope": entities_in_scope,
    "citations_retrieved": citations_retrieved,
    "quotes_anchored": quotes_anchored,
    "numbers_recorded": numbers_recorded,
    "dates_recorded": dates_recorded,
}
FAMILIES: tuple[str, ...] = tuple(BUILDERS)


@dataclass(frozen=True)
class FactSpec:
    """One fact to record: ``kind`` picks the recorder (table, ranking, domain, value,
    documents); ``options["restricted"]`` records it restricted."""

    kind: Literal["table", "ranking", "domain", "value", "documents"]
    name: str
    data: Any
    options: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Case:
    id: str
    family: str
    failure_class: str
    label: Label
    facts: tuple[FactSpec, ...]
    check: Mapping[str, Any]
    output: Mapping[str, Any]
    expect_code: str | None = None
    expect_error: str | None = None  # the exception type that rejects it (unsupported only)
    known_limit: bool = False  # misclassified by design: published, and pinned as such


@dataclass(frozen=True)
class Outcome:
    """What the checker said: ``verdict`` is supported, unsupported or error (anything else)."""

    verdict: Literal["supported", "unsupported", "error"]
    code: str | None = None
    detail: str = ""


def record(registry: FactRegistry, spec: FactSpec) -> None:
    tool = spec.options.get("tool", "warehouse.query")
    args = spec.options.get("args", {"q": spec.name})
    restricted = spec.options.get("restricted", False)
    if spec.kind == "documents":
        registry.record_documents(spec.name, spec.data, tool=tool, args=args, restricted=restricted)
    elif spec.kind == "table":
        registry.record_table(
            spec.name,
            spec.data,
            key=spec.options["key"],
            tool=tool,
            args=args,
            exhaustive=spec.options.get("exhaustive", True),
            restricted=restricted,
        )
    elif spec.kind == "ranking":
        registry.record_ranking(
            spec.name,
            spec.data,
            key=spec.options.get("key", "score"),
            tool=tool,
            args=args,
            higher_is_better=spec.options.get("higher_is_better", True),
            restricted=restricted,
        )
    elif spec.kind == "domain":
        registry.record_domain(spec.name, spec.data, tool=tool, args=args, restricted=restricted)
    else:
        registry.record(spec.name, spec.data, tool=tool, args=args, restricted=restricted)


def evaluate(case: Case) -> Outcome:
    """Record the case's facts in a fresh registry, build its check and submit the output
    through a boundary declaring every fact (the path a user takes)."""
    try:
        registry = FactRegistry()
        for spec in case.facts:
            record(registry, spec)
        options = dict(case.check)
        check = BUILDERS[options.pop("builder")](**options)
        declared = boundary(registry, facts=[spec.name for spec in case.facts], checks=[check])
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", SparseColumnWarning)
            with declared as entered:
                entered.submit(case.output)
    except UnsupportedClaim as claim:
        return Outcome("unsupported", claim.code, str(claim))
    except Exception as exc:  # a misconfigured case or a checker crash: never a verdict
        return Outcome("error", type(exc).__name__, f"{type(exc).__name__}: {exc}")
    return Outcome("supported")


# -- the oracle -----------------------------------------------------------------------------


def is_num(value: object) -> bool:
    return (
        isinstance(value, (int, float))
        and not isinstance(value, bool)
        and not (isinstance(value, float) and not math.isfinite(value))
    )


def representable(exact: Fraction) -> bool:
    """An exact int, or a non-integral value whose nearest float is non-zero and below 2**53
    in magnitude (beyond it every float is an integer, so none stands for a fraction)."""
    if exact.denominator == 1:
        return True
    try:
        near = float(exact)
    except OverflowError:
        return False
    return near != 0.0 and abs(near) < 2**53


def printed(value: int | float) -> Fraction:
    """A number as the decimal it prints as: an int itself, a float its shortest repr."""
    if isinstance(value, int):
        return Fraction(value)
    return Fraction(Decimal(repr(float(value))))


def truly_matches(
    claimed: Any,
    exact: Fraction,
    tolerance: float | int = 0,
    rel: float | int | None = None,
    read: Callable[[Any], Fraction] = Fraction,
) -> bool:
    """The numeric rule, restated independently of groundplane_otel._arithmetic; ``read``
    says what a claim and the tolerances are (their binary value; ``printed``: their decimal,
    as aggregate_reconciles reads them)."""
    if not is_num(claimed) or not representable(exact):
        return False
    claim = read(claimed)
    if claim == exact:
        return True
    if exact.denominator != 1 and Fraction(claimed) == Fraction(float(exact)):
        return True  # an int or a float equal in value to the nearest float
    diff = abs(claim - exact)
    if tolerance and diff <= read(tolerance):
        return True
    return bool(rel) and diff <= read(rel) * max(abs(claim), abs(exact))


def nearest(exact: Fraction) -> int | float:
    """How a model writes an exact value: the int when integral, else the nearest float."""
    return int(exact) if exact.denominator == 1 else float(exact)
