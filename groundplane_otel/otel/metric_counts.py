"""Reading the guard's own counters back from a metric reader (replay reports, grounded tests).

One place for it: the replay report and the pytest plugin's ``outcomes()`` count the same
``groundplane.outputs`` points the same way.
"""

from __future__ import annotations

from typing import Any

from groundplane_otel.otel import semconv as sc

__all__ = ["counter_totals"]


def counter_totals(reader: Any, metric: str, *labels: str) -> dict[tuple[str, ...], int]:
    """The cumulative totals of the guard's counter ``metric`` (``sc.METRIC_OUTPUTS`` ...)
    collected from ``reader`` (an SDK ``MetricReader`` with ``get_metrics_data``), keyed by the
    values of ``labels`` ("" where a point has no such label); zero totals are left out."""
    totals: dict[tuple[str, ...], int] = {}
    data = reader.get_metrics_data()
    for resource in data.resource_metrics if data is not None else ():
        for scope in resource.scope_metrics:
            if scope.scope.name != sc.METER_NAME:
                continue
            for found in scope.metrics:
                if found.name != metric:
                    continue
                for point in found.data.data_points:
                    attributes = point.attributes or {}
                    key = tuple(str(attributes.get(label, "")) for label in labels)
                    value = int(getattr(point, "value", 0))
                    if value:
                        totals[key] = totals.get(key, 0) + value
    return totals
