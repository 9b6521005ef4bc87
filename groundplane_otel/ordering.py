"""groundplane's ``ordering`` module, kept for the import switch.

A thin re-export of ``ranking_prefix`` and ``check_ranking_prefix`` from
:mod:`groundplane_otel.checks.ranking_prefix`:
``from groundplane.ordering import ranking_prefix`` keeps working
as ``from groundplane_otel.ordering import ranking_prefix``.
"""

from __future__ import annotations

from groundplane_otel.checks.ranking_prefix import check_ranking_prefix, ranking_prefix

__all__ = ["check_ranking_prefix", "ranking_prefix"]
