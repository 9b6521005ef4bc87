"""The guard leaves no reference cycle behind: the spans it checked, their facts, claims and
findings are freed by reference counting as soon as nothing uses them, never left for a
garbage collection (which runs late for objects that lived through an LLM call, and holds
their attributes, prompts and answers included, until it does)."""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from otel_harness import SALES_ROWS, Harness, answer, sales_config

from groundplane_otel.errors import FactBoundaryError
from groundplane_otel.otel.otlp_files import OtlpFileExporter, read_requests
from groundplane_otel.otel.replay import Replayer

RUNS = [("EU", True), ("US", True), ("EU", False), (None, True), ("US", True)]


@pytest.fixture
def otel() -> Iterator[Harness]:
    harness = Harness()
    yield harness
    harness.close()


def _cyclic_garbage(run: Callable[[], None]) -> int:
    """The objects only a garbage collection would free, after ``run`` (collection off)."""
    gc.collect()
    gc.disable()
    try:
        run()
        return gc.collect()
    finally:
        gc.enable()


def _traffic(otel: Harness) -> None:
    """Right and wrong answers, a missing fact and an agent with no answer; the exported spans
    dropped afterwards (the in-memory exporter would keep them)."""
    for winner, facts in RUNS:
        with contextlib.suppress(FactBoundaryError), otel.agent():
            if facts:
                otel.tool(SALES_ROWS)
            if winner is not None:
                otel.chat(answer({"winner": winner}))
    otel.exporter.clear()


def test_live_guarded_traces_leave_no_cyclic_garbage(otel: Harness) -> None:
    """In observe mode, five guarded runs (each outcome) leave nothing for a collection, and
    were checked: two answers flagged, one supported, two errors."""
    otel.install(sales_config(mode="observe"))
    _traffic(otel)  # first use: caches filled
    assert _cyclic_garbage(lambda: _traffic(otel)) == 0
    outputs = {(a["groundplane.outcome"], v) for a, v in otel.metrics()["groundplane.outputs"]}
    assert outputs == {("flagged", 4), ("passed", 2), ("error", 4)}


@pytest.mark.parametrize("mode", ["observe", "enforce"])
def test_replayed_traces_leave_no_cyclic_garbage(tmp_path: Path, mode: str) -> None:
    """Replaying the recording of those runs (enforce: each refusal raised and caught, as the
    app would) leaves nothing for a collection per trace, with the replayer still alive."""
    recorder = Harness()
    path = tmp_path / "traces.jsonl"
    recorder.tracer_provider.add_span_processor(SimpleSpanProcessor(OtlpFileExporter(path)))
    _traffic(recorder)
    recorder.close()
    requests = list(read_requests([path], []))
    replayer = Replayer(sales_config(mode=mode))
    try:

        def replay() -> None:
            for request in requests:
                replayer.feed(request)
            replayer.finish()

        replay()
        assert _cyclic_garbage(replay) == 0
        assert replayer.stats.outputs == {
            ("answer", "flagged" if mode == "observe" else "blocked"): 4,
            ("answer", "passed"): 2,
            ("answer", "error"): 4,
        }
    finally:
        replayer.close()
