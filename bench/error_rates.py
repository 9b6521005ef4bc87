"""The checker's own false-pass / false-reject rates, per family (``python -m bench.error_rates``).

Generates the labelled corpus (``tests/corpus``, fixed seed 20261129) in memory, submits every
case through a boundary, and prints the per-family table in markdown, for docs/measured.md. Also
part of ``python -m bench`` (with a small corpus under ``--smoke``).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any

from bench import Section

__all__ = ["main", "run"]

TESTS = Path(__file__).resolve().parent.parent / "tests"


def _corpus() -> tuple[Any, Any]:
    if str(TESTS) not in sys.path:
        sys.path.insert(0, str(TESTS))
    from corpus import generate, rates

    return generate, rates


def _rate(count: int, of: int) -> str:
    return f"{count} / {of:,} ({100 * count / of:.2f} %)" if of else "—"


def run(smoke: bool) -> list[Section]:
    section, _, classes = _measure(smoke)
    return [section, classes]


def _measure(smoke: bool) -> tuple[Section, int, Section]:
    """The table, how many cases the checker got wrong (false passes, rejects, errors), and
    the per-class table of the prose classes of issue 40."""
    generate, rates = _corpus()
    started = time.perf_counter()
    cases = generate.generate(generate.SEED, per_class=6 if smoke else generate.PER_CLASS)
    result = rates.run(cases)
    elapsed = time.perf_counter() - started
    section = Section(
        key="error_rates",
        title=f"The checker's own error rates (labelled corpus, seed {generate.SEED})",
        headers=(
            "family",
            "failure classes",
            "wrong outputs",
            "false passes",
            "correct outputs",
            "false rejects",
            "errors",
        ),
    )
    for family, tally in [*result.by_family.items(), ("**all**", result.total)]:
        wrong_classes = [c for c in tally.classes if not c.startswith("correct:")]
        section.rows.append(
            (
                family,
                str(len(wrong_classes)),
                f"{tally.wrong:,}",
                _rate(tally.false_pass, tally.wrong),
                f"{tally.correct:,}",
                _rate(tally.false_reject, tally.correct),
                str(tally.errors),
            )
        )
    section.notes.append(
        f"{len(cases):,} labelled outputs generated and checked in {elapsed:.1f} s; each is "
        "submitted through a boundary. `tests/test_error_rates.py` fails on any false pass or "
        "false reject other than the published known limits, and if a known limit stops missing."
    )
    if result.limits:
        section.notes.append(
            f"{len(result.limits)} of the misses are known limits, by design (docs/measured.md): "
            + ", ".join(case.id for case, _ in result.limits)
            + "."
        )
    section.notes.extend(rates.describe(case, outcome) for case, outcome in result.misses[:10])
    return section, len(result.misses) + len(result.fixed_limits), _classes(result)


def _classes(result: Any) -> Section:
    """False pass / false reject per class of issue 40 (prose claims, second pass)."""
    from corpus.gen_prose_second import CLASSES, FAMILY_OF

    section = Section(
        key="error_rates_issue40",
        title="Prose claims, second pass (issue 40): error rates per class",
        headers=("class", "family", "wrong outputs", "false passes", "correct outputs",
                 "false rejects"),
    )  # fmt: skip
    for name in (*CLASSES, "hard40"):
        tally = result.by_class.get(name)
        if tally is None:
            continue
        family = FAMILY_OF.get(name, "numbers_recorded") if name != "hard40" else "(several)"
        section.rows.append(
            (
                name if name != "hard40" else "hand-written (hard40)",
                family,
                f"{tally.wrong:,}",
                _rate(tally.false_pass, tally.wrong),
                f"{tally.correct:,}",
                _rate(tally.false_reject, tally.correct),
            )
        )
    section.notes.append(
        "The hand-written misses are the published known limits (docs/measured.md)."
    )
    return section


def main() -> int:
    from bench import render

    section, misses, classes = _measure(smoke="--smoke" in sys.argv[1:])
    print(render([section, classes]))
    return 1 if misses else 0


if __name__ == "__main__":
    raise SystemExit(main())
