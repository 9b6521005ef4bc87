"""Memory accounting: the bytes the store counts for a fact against what tracemalloc sees.

Each shape's JSON text goes through the guard's own path — ``parse_payload``, ``build_fact``,
``estimate_size`` (what ``max_trace_bytes``/``max_total_bytes`` are charged once a limit binds)
— and the figure is compared with the memory the built fact retains (tracemalloc, after the
parse's temporaries are gone), as is the bound charged while the limits are far
(``text_bound`` of the text: no walk). Checks' caches are measured the same way
(``derived_size`` after six checks ran). The estimate's own cost is timed against the parse it
follows. ``python -m bench --only accounting``.
"""

from __future__ import annotations

import gc
import json
import tracemalloc
from collections.abc import Callable
from typing import Any

from bench import Section, compare, fmt_bytes, fmt_time
from bench._scenario import FACT, make_output, make_rows, six_checks
from groundplane_otel.otel._engine.capture import build_fact
from groundplane_otel.otel._engine.payload import parse_payload
from groundplane_otel.otel._engine.sizing import derived_size, text_bound
from groundplane_otel.otel._engine.store import estimate_size
from groundplane_otel.otel.config import FactSpec
from groundplane_otel.registry import FactRegistry

__all__ = ["run"]


def _shapes(scale: int) -> dict[str, tuple[str, FactSpec]]:
    rows = make_rows(2_000 * scale)
    table = FactSpec("t", "x", kind="table", key="region", path="rows")
    value = FactSpec("t", "x")
    return {
        "row table (Table)": (json.dumps({"rows": rows}), table),
        "rows as a value": (json.dumps(rows), value),
        "rows as a ranking": (
            json.dumps(rows),
            FactSpec("t", "x", kind="ranking", key="region", score="spend"),
        ),
        "tiny objects `[{},{},…]`": ("[" + ",".join(["{}"] * 100_000 * scale) + "]", value),
        "tiny arrays `[[],[],…]`": ("[" + ",".join(["[]"] * 100_000 * scale) + "]", value),
        "floats": ("[" + ",".join(["1.5"] * 100_000 * scale) + "]", value),
        "long strings": (json.dumps(["x" * 200_000 + str(i) for i in range(4 * scale)]), value),
        "names (Domain)": (
            json.dumps([f"name-{i}" for i in range(50_000 * scale)]),
            FactSpec("t", "x", kind="domain"),
        ),
        "name → score map (Ranking)": (
            json.dumps({f"name-{i}": i for i in range(50_000 * scale)}),
            FactSpec("t", "x", kind="ranking"),
        ),
    }


def _held(step: Callable[[], Any]) -> tuple[int, Any]:
    gc.collect()
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    kept = step()
    gc.collect()
    held = tracemalloc.get_traced_memory()[0] - before
    tracemalloc.stop()
    return held, kept


def _build(text: str, spec: FactSpec) -> Any:
    parsed = parse_payload(text, max_bytes=1 << 30, max_depth=64)
    return build_fact(spec, parsed.value)


def _derived_row(scale: int) -> tuple[str, ...]:
    """A 2,000-row table, then the six checks: what they cache on it vs ``derived_size``."""
    rows = make_rows(2_000 * scale)
    registry = FactRegistry()
    registry.record_table(FACT, json.loads(json.dumps(rows)), key="region")
    output = make_output(rows)

    def check() -> None:
        for run_check in six_checks():
            run_check(registry, output)

    held, _ = _held(check)
    accounted = derived_size(registry.peek(FACT).value)
    return (
        "checks' caches on a row table",
        "—",
        fmt_bytes(held),
        fmt_bytes(accounted),
        f"{accounted / held:.2f}",
        "—",
        "—",
        "—",
    )


def run(smoke: bool) -> list[Section]:
    scale = 1 if smoke else 5
    section = Section(
        key="accounting",
        title="Memory accounting: bytes charged against the limits vs bytes retained",
        headers=(
            "shape",
            "JSON text",
            "retained (tracemalloc)",
            "measured",
            "ratio",
            "bound (limits far)",
            "parse + build",
            "estimate",
        ),
    )
    for label, (text, spec) in _shapes(scale).items():
        held, value = _held(lambda text=text, spec=spec: _build(text, spec))
        accounted = estimate_size(value)
        timings = compare(
            {
                "build": lambda text=text, spec=spec: _build(text, spec),
                "estimate": lambda value=value: estimate_size(value),
            },
            repeats=3 if smoke else 7,
        )
        section.rows.append(
            (
                label,
                fmt_bytes(len(text)),
                fmt_bytes(held),
                fmt_bytes(accounted),
                f"{accounted / held:.2f}",
                f"{text_bound(len(text)) / held:.1f}x",
                fmt_time(timings["build"].median),
                fmt_time(timings["estimate"].median),
            )
        )
        del value
    section.rows.append(_derived_row(scale))
    section.notes.append(
        "ratio = measured / retained; tests/otel/test_memory_accounting.py pins it within "
        "[0.5, 2] on the real guard path. The estimate is a sampling walk (8 children per "
        "container, 4,096 visits at most), so its cost does not grow with the fact. While the "
        "limits are far a fact parsed from JSON text is charged its text bound instead (the "
        "'bound' column: never less than it retains, pinned on the densest shapes), and "
        "measured only when a bound would cross a limit."
    )
    return [section]
