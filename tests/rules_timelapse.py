"""A time-lapse of a Prometheus rules file, for live alert tests that cannot wait hours.

The burn-rate alerts look at 5m..3d windows and hold ``for:`` 2m..15m; pending time is
wall-clock time between rule evaluations, which no backfill provides. ``scale_rules`` divides
every range selector, every window-length constant of the low-traffic guard and every ``for:``
by ``scale`` (60: one test second stands for one production minute); counts, ratios,
thresholds, names and labels are unchanged. tests/test_prometheus_proof.py checks that nothing
else changes and that promtool accepts the result.
"""

from __future__ import annotations

import copy
import re
from typing import Any

_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}
RANGE = re.compile(r"\[(\d+[smhdw])\]")
# rate<window> * <seconds in the window>: a per-second rate turned into a count in the window.
WINDOW_COUNT = re.compile(r"(job:groundplane_claims:rate(\d+[smhdw])) \* (\d+)")


def seconds(duration: str) -> int:
    """Seconds in a single-unit Prometheus duration such as ``15m``."""
    match = re.fullmatch(r"(\d+)([smhdw])", duration)
    if match is None:
        raise ValueError(f"not a single-unit duration: {duration!r}")
    return int(match[1]) * _UNITS[match[2]]


def _scaled(duration: str, scale: int) -> str:
    total = seconds(duration)
    if total % scale:
        raise ValueError(f"{duration} is not a whole number of seconds once divided by {scale}")
    return f"{total // scale}s"


def scale_expr(expr: str, scale: int) -> str:
    """Divide every range selector and window-length constant of a PromQL rule by ``scale``."""

    def window_count(match: re.Match[str]) -> str:
        if int(match[3]) != seconds(match[2]):
            raise ValueError(f"{match[0]!r}: the constant is not the window length in seconds")
        return f"{match[1]} * {seconds(match[2]) // scale}"

    expr = RANGE.sub(lambda match: f"[{_scaled(match[1], scale)}]", expr)
    return WINDOW_COUNT.sub(window_count, expr)


def scale_rules(document: dict[str, Any], scale: int) -> dict[str, Any]:
    """A time-lapse of a Prometheus rules file: windows, window constants and ``for:`` / scale.

    Names (``job:groundplane_claims:rate1h`` keeps its name), labels, annotations, thresholds
    and counts are unchanged.
    """
    out = copy.deepcopy(document)
    for group in out["groups"]:
        for rule in group["rules"]:
            rule["expr"] = scale_expr(rule["expr"], scale)
            if "for" in rule:
                rule["for"] = _scaled(rule["for"], scale)
    return out
