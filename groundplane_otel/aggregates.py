"""groundplane's ``aggregates`` module, kept for the import switch.

A thin re-export of ``aggregate_reconciles`` and ``check_aggregate_reconciles`` from
:mod:`groundplane_otel.checks.aggregate_reconciles`:
``from groundplane.aggregates import aggregate_reconciles`` keeps working
as ``from groundplane_otel.aggregates import aggregate_reconciles``.
"""

from __future__ import annotations

from groundplane_otel.checks.aggregate_reconciles import (
    aggregate_reconciles,
    check_aggregate_reconciles,
)

__all__ = ["check_aggregate_reconciles", "aggregate_reconciles"]
