"""groundplane's ``rows`` module, kept for the import switch.

A thin re-export of ``row_integrity`` and ``check_row_integrity`` from
:mod:`groundplane_otel.checks.row_integrity`:
``from groundplane.rows import row_integrity`` keeps working
as ``from groundplane_otel.rows import row_integrity``.
"""

from __future__ import annotations

from groundplane_otel.checks.row_integrity import check_row_integrity, row_integrity

__all__ = ["check_row_integrity", "row_integrity"]
