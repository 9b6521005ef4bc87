"""The PromQL a Grafana user's browser would send for dashboards/groundplane.json.

Shared by the Prometheus tests (test_prometheus_server.py: synthetic metrics;
test_prometheus_proof.py: the real guard's metrics), so both run exactly the same queries.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

DASHBOARD = Path(__file__).parents[1] / "dashboards" / "groundplane.json"


def dashboard_exprs(path: Path = DASHBOARD) -> list[str]:
    """Every panel target's PromQL, as written in the dashboard (variables not substituted)."""
    board = json.loads(path.read_text())
    return [t["expr"] for p in board["panels"] for t in p["targets"]]


def variable_queries(path: Path = DASHBOARD) -> list[str]:
    """label_values(selector, label) variables, rewritten as PromQL: group by (label) (selector)."""
    board = json.loads(path.read_text())
    out = []
    for var in board["templating"]["list"]:
        if var["type"] != "query":
            continue
        match = re.fullmatch(r"label_values\((.+), (\w+)\)", var["query"]["query"])
        assert match, var["query"]
        out.append(f"group by ({match[2]}) ({match[1]})")
    return out


def substitute(expr: str) -> str:
    """Replace Grafana variables the way an All selection and a short range would."""
    expr = expr.replace("$__rate_interval", "1m").replace("$__range", "5m")
    return re.sub(r"\$\{?(\w+)\}?", ".*", expr)
