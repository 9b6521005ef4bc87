"""What an unmatched span costs with the guard installed: ``python -m bench.span_cost [repeats]``.

Side by side, interleaved, median of repeats (``bench.compare``), on a real SDK TracerProvider
exporting through SimpleSpanProcessor to a no-op exporter. The trace is a plain request (a root
and three children, no GenAI attributes). Variants: the plain SDK; the SDK plus a no-op
SpanProcessor (what any processor costs); the guard whose boundary matches by agent name (it
tracks span lineage); the guard whose boundary matches by operation name (no lineage). Prints;
asserts nothing.
"""

from __future__ import annotations

import logging
import sys
from typing import Any

from bench import calls_for, compare, fmt_time
from bench.guard import _config, _sdk, _unmatched_trace


def _operation_config() -> Any:
    from groundplane_otel.otel import BoundarySpec, GuardConfig, MatchSpec

    agent = _config()
    (spec,) = agent.boundaries
    by_operation = BoundarySpec(
        spec.name, spec.facts, spec.checks, match=MatchSpec(operation_name="chat")
    )
    return GuardConfig(facts=agent.facts, boundaries=(by_operation,))


def main(repeats: int = 31) -> None:
    logging.disable(logging.WARNING)  # the sampler advice, once per install
    from opentelemetry.sdk.trace import SpanProcessor

    provider, _, _ = _sdk()
    noop = provider(False)
    noop.add_span_processor(SpanProcessor())
    providers = {
        "plain SDK": provider(False),
        "+ no-op processor": noop,
        "+ guard (agent match)": provider(True, _config()),
        "+ guard (operation match)": provider(True, _operation_config()),
    }
    variants = {name: _unmatched_trace(tp.get_tracer("bench")) for name, tp in providers.items()}
    number = {name: calls_for(fn, 0.05) for name, fn in variants.items()}
    timed = compare(variants, repeats=repeats, number=number)
    base = timed["plain SDK"].median
    print(f"unmatched trace = root + 3 child spans; median of {repeats} interleaved runs\n")
    print("| variant | per trace | per span | vs plain | added per span |")
    print("|---|---|---|---|---|")
    for name, timing in timed.items():
        added = (timing.median - base) / 4
        print(
            f"| {name} | {fmt_time(timing.median)} | {fmt_time(timing.median / 4)} "
            f"| {timing.median / base:.3f}x | {fmt_time(added) if added > 0 else '—'} |"
        )


def hooks_alone(repeats: int) -> None:
    """The guard's on_start + on_end on one finished child span, without the SDK around them."""
    from opentelemetry.sdk.trace import SpanProcessor

    from groundplane_otel.otel import install

    provider, _, meter_provider_type = _sdk()
    tracer_provider = provider(False)
    guards = {
        "no-op processor": SpanProcessor(),
        "guard (agent match)": install(
            _config(), tracer_provider=tracer_provider, meter_provider=meter_provider_type()
        ).processor,
        "guard (operation match)": install(
            _operation_config(),
            tracer_provider=provider(False),
            meter_provider=meter_provider_type(),
        ).processor,
    }
    tracer = tracer_provider.get_tracer("bench")
    with (
        tracer.start_as_current_span("GET /campaigns"),
        tracer.start_as_current_span("SELECT campaigns", attributes={"db.system": "pg"}) as span,
    ):
        pass
    child: Any = span

    def hooks(processor: Any) -> Any:
        def run() -> None:
            processor.on_start(child)
            processor.on_end(child)

        return run

    variants = {name: hooks(processor) for name, processor in guards.items()}
    timed = compare(variants, repeats=repeats, number=20_000)
    print("\non_start + on_end of one unmatched child span, hooks called directly\n")
    print("| processor | per span |")
    print("|---|---|")
    for name, timing in timed.items():
        print(f"| {name} | {fmt_time(timing.median)} |")


if __name__ == "__main__":
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 31
    main(count)
    hooks_alone(count)
