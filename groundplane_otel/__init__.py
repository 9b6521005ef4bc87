"""groundplane_otel: a deterministic grounding guard for LLM agents, native to OpenTelemetry.

The core (this namespace) is groundplane's public API and imports nothing beyond the standard
library: ``import groundplane_otel as groundplane`` keeps a groundplane user working. The
OpenTelemetry layer lives in :mod:`groundplane_otel.otel`.

Each public name is imported when first used (PEP 562), so importing a submodule alone — the
pytest plugin pytest loads at every start-up, the CLI — does not load the whole core.
"""

from __future__ import annotations

import importlib
import sys
from types import ModuleType
from typing import TYPE_CHECKING, Final, NamedTuple

if TYPE_CHECKING:  # the names, for type checkers; at run time they load on first use
    from groundplane_otel.boundary import Boundary, BoundaryDeclaration, boundary
    from groundplane_otel.checks._base import Check, NamedCheck
    from groundplane_otel.checks.aggregate_reconciles import (
        aggregate_reconciles,
        check_aggregate_reconciles,
    )
    from groundplane_otel.checks.citations_retrieved import (
        check_citations_retrieved,
        citations_retrieved,
    )
    from groundplane_otel.checks.comparison import check_comparison, comparison
    from groundplane_otel.checks.dates_recorded import (
        UnrecordedDates,
        check_dates_recorded,
        dates_recorded,
    )
    from groundplane_otel.checks.entities_in_scope import check_entities_in_scope, entities_in_scope
    from groundplane_otel.checks.entities_recorded import check_entities_recorded, entities_recorded
    from groundplane_otel.checks.field_matches_fact import (
        check_field_matches_fact,
        field_matches_fact,
    )
    from groundplane_otel.checks.no_restricted_values import (
        check_no_restricted_values,
        no_restricted_values,
    )
    from groundplane_otel.checks.numbers_recorded import (
        UnrecordedNumbers,
        check_numbers_recorded,
        numbers_recorded,
    )
    from groundplane_otel.checks.quotes_anchored import check_quotes_anchored, quotes_anchored
    from groundplane_otel.checks.ranking_prefix import check_ranking_prefix, ranking_prefix
    from groundplane_otel.checks.row_integrity import check_row_integrity, row_integrity
    from groundplane_otel.checks.superlative import check_superlative, superlative
    from groundplane_otel.documents import Document, Documents
    from groundplane_otel.errors import (
        ClaimsUnsupported,
        FactBoundaryError,
        SparseColumnWarning,
        UnknownColumn,
        UnregisteredFact,
        UnsupportedClaim,
    )
    from groundplane_otel.facts import Domain, Fact, Provenance, Ranking, Table
    from groundplane_otel.registry import FactRegistry
    from groundplane_otel.report import Report

__version__ = "0.1.0"


class _Family(NamedTuple):
    """A check family: ``name`` is its builder's name and its module's in
    ``groundplane_otel.checks`` (whose ``check_<name>`` twin and ``exports`` are public too);
    ``reference`` is the groundplane module a switching user imports it from, if any."""

    name: str
    exports: tuple[str, ...] = ()
    reference: str | None = None


_FAMILIES: Final = (
    _Family("superlative", reference="checks"),
    _Family("ranking_prefix", reference="ordering"),
    _Family("aggregate_reconciles", reference="aggregates"),
    _Family("entities_recorded", reference="entities"),
    _Family("row_integrity", reference="rows"),
    _Family("comparison", reference="comparison"),
    _Family("field_matches_fact", reference="checks"),
    _Family("no_restricted_values"),
    _Family("entities_in_scope"),
    _Family("citations_retrieved"),
    _Family("quotes_anchored"),
    _Family("numbers_recorded", ("UnrecordedNumbers",)),
    _Family("dates_recorded", ("UnrecordedDates",)),
)
"""The check families, in the order a policy's "use one of" lists them: the one registry the
namespace below, the policy reader (``otel/policy/_checks``) and the groundplane module names
are derived from. The ``TYPE_CHECKING`` imports and ``__all__`` stay written out (type checkers
read them without running this module), and tests/test_lazy_namespace.py and
tests/test_families.py pin them and docs/checks.md to it."""

# Where each public name lives: the same modules as the imports above (a test pins that).
_MODULES: Final[dict[str, tuple[str, ...]]] = {
    "boundary": ("Boundary", "BoundaryDeclaration", "boundary"),
    "checks._base": ("Check", "NamedCheck"),
    **{
        f"checks.{family.name}": (*family.exports, f"check_{family.name}", family.name)
        for family in _FAMILIES
    },
    "documents": ("Document", "Documents"),
    "errors": (
        "ClaimsUnsupported",
        "FactBoundaryError",
        "SparseColumnWarning",
        "UnknownColumn",
        "UnregisteredFact",
        "UnsupportedClaim",
    ),
    "facts": ("Domain", "Fact", "Provenance", "Ranking", "Table"),
    "registry": ("FactRegistry",),
    "report": ("Report",),
}
_SOURCE: Final = {
    name: f"{__name__}.{module}" for module, names in _MODULES.items() for name in names
}

__all__ = [
    "Boundary",
    "BoundaryDeclaration",
    "Check",
    "ClaimsUnsupported",
    "Document",
    "Documents",
    "Domain",
    "Fact",
    "FactBoundaryError",
    "FactRegistry",
    "NamedCheck",
    "Provenance",
    "Ranking",
    "Report",
    "SparseColumnWarning",
    "Table",
    "UnknownColumn",
    "UnregisteredFact",
    "UnrecordedDates",
    "UnrecordedNumbers",
    "UnsupportedClaim",
    "__version__",
    "aggregate_reconciles",
    "boundary",
    "check_aggregate_reconciles",
    "check_citations_retrieved",
    "check_comparison",
    "check_dates_recorded",
    "check_entities_in_scope",
    "check_entities_recorded",
    "check_field_matches_fact",
    "check_no_restricted_values",
    "check_quotes_anchored",
    "check_numbers_recorded",
    "check_ranking_prefix",
    "check_row_integrity",
    "check_superlative",
    "citations_retrieved",
    "comparison",
    "dates_recorded",
    "entities_in_scope",
    "entities_recorded",
    "field_matches_fact",
    "no_restricted_values",
    "quotes_anchored",
    "numbers_recorded",
    "ranking_prefix",
    "row_integrity",
    "superlative",
]


def _load(name: str) -> object:
    """The public ``name`` from its module (imported now if it is not yet), kept here."""
    value = getattr(importlib.import_module(_SOURCE[name]), name)
    globals()[name] = value
    return value


if not TYPE_CHECKING:  # hidden from type checkers, which then still flag a misspelt name

    def __getattr__(name: str) -> object:
        if name not in _SOURCE:
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
        return _load(name)


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})


class _Package(ModuleType):
    """This package. Two public names are also module names (``boundary``, and groundplane's
    ``comparison``, a re-export module); the import system binds a submodule on its
    package once loaded, and here the public name (the builder) wins, as it did when this
    namespace imported everything eagerly."""

    def __setattr__(self, name: str, value: object) -> None:
        if isinstance(value, ModuleType) and name in _SOURCE:
            value = _load(name)
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package
