"""groundplane's ``entities`` module, kept for the import switch.

A thin re-export of ``entities_recorded`` and ``check_entities_recorded`` from
:mod:`groundplane_otel.checks.entities_recorded`:
``from groundplane.entities import entities_recorded`` keeps working
as ``from groundplane_otel.entities import entities_recorded``.
"""

from __future__ import annotations

from groundplane_otel.checks.entities_recorded import check_entities_recorded, entities_recorded

__all__ = ["check_entities_recorded", "entities_recorded"]
