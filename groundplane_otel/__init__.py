"""groundplane_otel: a deterministic grounding guard for LLM agents, native to OpenTelemetry.

The core (this namespace) is groundplane's public API and imports nothing beyond the standard
library: ``import groundplane_otel as groundplane`` keeps a groundplane user working. The
OpenTelemetry layer lives in :mod:`groundplane_otel.otel`.
"""

from __future__ import annotations

from groundplane_otel.boundary import Boundary, BoundaryDeclaration, boundary
from groundplane_otel.checks._base import Check, NamedCheck
from groundplane_otel.checks.aggregate import aggregate_reconciles, check_aggregate_reconciles
from groundplane_otel.checks.anchors import check_quotes_anchored, quotes_anchored
from groundplane_otel.checks.citations import check_citations_retrieved, citations_retrieved
from groundplane_otel.checks.entities import check_entities_recorded, entities_recorded
from groundplane_otel.checks.field_match import check_field_matches_fact, field_matches_fact
from groundplane_otel.checks.numbers import (
    UnrecordedNumbers,
    check_numbers_recorded,
    numbers_recorded,
)
from groundplane_otel.checks.ranking_prefix import check_ranking_prefix, ranking_prefix
from groundplane_otel.checks.restricted import check_no_restricted_values, no_restricted_values
from groundplane_otel.checks.row_integrity import check_row_integrity, row_integrity
from groundplane_otel.checks.scope import check_entities_in_scope, entities_in_scope
from groundplane_otel.checks.superlative import check_superlative, superlative

# Through the re-export module: loading it binds ``groundplane_otel.comparison`` to the module,
# and this import then rebinds the name to the builder (as in groundplane), for good.
from groundplane_otel.comparison import check_comparison, comparison
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
    "UnrecordedNumbers",
    "UnsupportedClaim",
    "__version__",
    "aggregate_reconciles",
    "boundary",
    "check_aggregate_reconciles",
    "check_citations_retrieved",
    "check_comparison",
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
