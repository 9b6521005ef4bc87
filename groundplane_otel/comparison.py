"""groundplane's ``comparison`` module, kept for the import switch.

A thin re-export of ``comparison`` and ``check_comparison`` from
:mod:`groundplane_otel.checks.comparison`:
``from groundplane.comparison import comparison`` keeps working
as ``from groundplane_otel.comparison import comparison``.
"""

from __future__ import annotations

from groundplane_otel.checks.comparison import check_comparison, comparison

__all__ = ["check_comparison", "comparison"]
