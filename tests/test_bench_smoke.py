"""The benchmarks never rot: ``python -m bench --smoke`` runs every one and prints every row.

No timing is asserted (a loaded CI machine must not fail the build); only that each benchmark
ran and reported the rows docs/measured.md quotes.
"""

from __future__ import annotations

from bench_command import run_bench

EXPECTED = {
    "Core: record-then-check and repeated checks": [
        "| record-then-check | 20 |",
        "| repeated check | 20 |",
        "| record-then-check | 200 |",
        "| repeated check | 200 |",
    ],
    "Scaling: each check family": [
        f"| {family} {phase} |"
        for family in (
            "superlative",
            "ranking_prefix",
            "aggregate_reconciles",
            "entities_recorded",
            "row_integrity",
            "comparison",
        )
        for phase in ("cold", "warm")
    ]
    + ["| record_table |"],
    "Argmax check vs a hand-written Pydantic v2 model validator": ["| 20 |", "| 200 |"],
    "Memory:": [
        "| backend |",
        "| peak traced memory |",
        "| traces left after every root ended | 0 |",
        "| still held after all ended |",
    ],
    "Memory accounting:": [
        "| row table (Table) |",
        "| tiny objects `[{},{},…]` |",
        "| long strings |",
        "| checks' caches on a row table |",
    ],
    "OpenTelemetry guard": [
        "| unmatched trace",
        "| guarded trace",
        "| added per guarded output vs the floor |",
        "| of which: strict parse of the tool result vs json.loads |",
    ],
    "OpenTelemetry guard in instructions (callgrind)": [
        "| unmatched trace (root + 3 child spans) | — | — | — | — | n/a (smoke) |",
        "| unmatched trace, the guard installed then uninstalled |",
        "| added per guarded output vs the floor | — | — | — | — | n/a (smoke) |",
    ],
    "Replay and the fleet verifier": [
        "| replay of 20 recorded traces (OTLP/JSON lines) |",
        "| verifier intake of 20 traces (OTLP protobuf) |",
        "|   of either: deciding alone (the spans already read; assembling, deciding and "
        "counting), vs each floor |",
        "|   of each: reading alone (the input as the engine's span records: json_reader / "
        "proto_spans; nothing assembled or decided), vs its floor |",
        "|   of either: parsing the checks' inputs alone (orjson.loads of each tool result and "
        "answer), vs each floor |",
        "|   what the 8x goal leaves the engine (assembling, deciding, counting; 8x minus the two "
        "rows above) vs what it takes (deciding alone minus its inputs), as multiples of each "
        "floor | — |",
        "|   what issue 38's 10x / 35x goals leave the engine (the same, against each goal), as "
        "multiples of each floor | — |",
        "| memory per buffered trace (3 spans, 20-row result) |",
        "| replay --jobs 2 vs --jobs 1, 20 traces, OTLP/JSON lines, one span per request",
        "|   CPU: --jobs 1 vs the --jobs 2 workers while both ran (split + replay: ",
        "|   the --jobs 2 workers one at a time here (split, then replay; what 2 independent idle "
        "cores would show) |",
        "| this machine's ceiling: the same CPU-bound work (a --jobs 1 replay of 5 traces, 1x) "
        "in 2 processes at once vs in 1 alone (2.0x on two independent idle cores) |",
        "| replay --jobs 2 vs --jobs 1, 20 traces, OTLP protobuf, one span per request",
        "| replay --jobs 2 vs --jobs 1, 20 traces, OTLP/JSON lines, batches of 512 spans",
        "| replay --jobs 2 vs --jobs 1, 20 traces, OTLP protobuf, batches of 512 spans",
        "| the command end to end (interpreter and workers started, report printed), 20 traces, "
        "OTLP/JSON lines, one span per request |",
        "| the command end to end (interpreter and workers started, report printed), 20 traces, "
        "OTLP/JSON lines, batches of 512 spans |",
    ],
    "Replay and verifier intake in instructions (callgrind)": [
        "| replay (OTLP/JSON lines) | — | — | n/a (smoke) |",
        "| verifier intake (OTLP protobuf) | — | — | n/a (smoke) |",
    ],
    "replay --jobs 2 vs --jobs 1 in instructions": [
        "| 4 traces, OTLP/JSON lines, one span per request | — | — | — | n/a (smoke) |",
        "| 4 traces, OTLP protobuf, batches of 512 spans | — | — | — | n/a (smoke) |",
    ],
    "suggest vs replay on the same recording": [
        "| 50 recorded runs (OTLP/JSON lines, 150 spans) |",
    ],
    "The pytest plugin at start-up": [
        "| whole run: bare pytest (the floor) |",
        "| whole run: + the plugin, test not using it |",
        "| whole run: + the plugin, test using its fixture (the guard layer) |",
        "| the plugin's load inside pytest, vs an empty plugin's (what every run pays) |",
    ],
    "The checker's own error rates": [
        f"| {family} |"
        for family in (
            "superlative",
            "ranking_prefix",
            "aggregate_reconciles",
            "entities_recorded",
            "row_integrity",
            "comparison",
            "field_matches_fact",
            "no_restricted_values",
            "entities_in_scope",
            "citations_retrieved",
            "quotes_anchored",
            "numbers_recorded",
        )
    ]
    + ["| **all** |"],
    "Money totals by table size": [
        f"| {rows} | 20 | 0 / 20 (0.00 %) | 20 | 0 / 20 (0.00 %) |"
        for rows in ("2", "5", "10", "100", "1,000", "5,000")
    ],
    "Prose claims, second pass": [
        f"| {name} |"
        for name in (
            "table_rank",
            "rank_alias",
            "unit_more",
            "document_unit",
            "clock_hour",
            "period",
            "hedged_leak",
            "paraphrase",
            "hand-written (hard40)",
        )
    ],
    "no_restricted_values: a 200-word answer against a 500-row table": [
        "| floor: one regex pass over the text + one pass over the cells |",
        "| first check (builds the fact's index) |",
        "| later checks (index reused) |",
    ],
    "Numbers in prose:": [
        "| floor: one regex pass + one pass over the facts |",
        "| scan_numbers alone |",
        "| numbers_recorded, cold (first check of the table) |",
        "| numbers_recorded, warm (value set kept on the table) |",
        "| numbers_recorded, cold, one wrong number (receipt) |",
    ],
    "Guarding a stream: a ": [
        "| wall time (median) |",
        "| instructions | — | — | — | — | — | — | — | n/a (smoke) |",
    ],
    "Guarding a stream: text held and release delay on the bench corpus": [
        "| prose, ",
        "| list, ",
        "| one run, no sentence end, ",
    ],
}


def test_bench_smoke_prints_every_table_and_row() -> None:
    """Every benchmark runs at tiny sizes and its table has all its rows."""
    done = run_bench("bench", "--smoke", timeout=600, check=False)
    assert done.returncode == 0, done.stderr[-4000:]
    sections = done.stdout.split("\n### ")
    for title, rows in EXPECTED.items():
        found = [section for section in sections if section.startswith(title)]
        assert found, f"no table titled {title!r} in:\n{done.stdout}"
        missing = [row for row in rows if row not in found[0]]
        assert not missing, f"{title!r} lacks rows {missing}:\n{found[0]}"
    assert "pending" not in done.stdout, "a benchmark reported itself unavailable"
