"""``groundplane-otel suggest`` vs ``replay`` on the same recording, side by side.

The replay bench's recording (invoke_agent > execute_tool with a 20-row result > chat with the
final answer, half right and half wrong), 10,000 agent runs: ``suggest`` (read, infer from the
first 1,000 runs, tally every candidate check on every run with the real checks) against
``replay`` with the replay bench's one-check policy. Issue 24 asks suggest <= 3x replay.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from bench import Section, compare, fmt_ratio, fmt_time
from bench.replay import _config, _record

__all__ = ["run"]


def run(smoke: bool) -> list[Section]:
    from groundplane_otel.otel.otlp_files import BadInput, Unreadable, located_requests
    from groundplane_otel.otel.replay import Replayer
    from groundplane_otel.otel.suggest import Suggester

    traces = 50 if smoke else 10_000
    repeats = 1 if smoke else 3
    config = _config()
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "traces.jsonl"
        _record(traces, path)
        checks: list[int] = []

        def replay() -> None:
            replayer = Replayer(config)
            bad: list[BadInput] = []
            for where, request in located_requests([path], bad):
                replayer.feed(request, where)
            replayer.finish()
            replayer.close()

        def suggest() -> None:
            suggester = Suggester(unreadable=Unreadable())
            for where, request in located_requests([path], suggester.unreadable):
                suggester.feed(request, where)
            suggestion = suggester.finish()
            checks.append(sum(len(plan.candidates) for plan in suggestion.boundaries))

        timings = compare({"replay": replay, "suggest": suggest}, repeats=repeats, warmup=0)
    replay_t, suggest_t = timings["replay"].median, timings["suggest"].median
    section = Section(
        "suggest",
        "suggest vs replay on the same recording",
        ("measure", "replay (one check)", "suggest", "ratio (<= 3x asked)"),
    )
    section.rows.append(
        (
            f"{traces:,} recorded runs (OTLP/JSON lines, {3 * traces:,} spans)",
            fmt_time(replay_t),
            fmt_time(suggest_t),
            fmt_ratio(suggest_t / replay_t),
        )
    )
    section.notes.append(
        f"Median of {repeats} interleaved runs, one process, one core; suggest tallied "
        f"{checks[-1]} candidate checks on every run (inferred from the first 1,000)."
    )
    return [section]
