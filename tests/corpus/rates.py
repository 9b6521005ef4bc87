"""Run the corpus and tally the checker's own error rates, per family and per failure class."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from .model import FAMILIES, Case, Outcome, evaluate


@dataclass
class Tally:
    """Counts for one family (or the total): wrong outputs passed, correct outputs rejected."""

    wrong: int = 0
    correct: int = 0
    false_pass: int = 0
    false_reject: int = 0
    errors: int = 0
    wrong_code: int = 0
    classes: set[str] = field(default_factory=set)

    @property
    def false_pass_rate(self) -> float:
        return self.false_pass / self.wrong if self.wrong else 0.0

    @property
    def false_reject_rate(self) -> float:
        return self.false_reject / self.correct if self.correct else 0.0


@dataclass
class Result:
    by_family: dict[str, Tally]
    total: Tally
    misses: list[tuple[Case, Outcome]]  # false passes, false rejects and errors
    miscoded: list[tuple[Case, Outcome]]  # rejected as expected, under another reason code
    limits: list[tuple[Case, Outcome]] = field(default_factory=list)  # known, published misses
    fixed_limits: list[tuple[Case, Outcome]] = field(default_factory=list)  # now right: doc it
    by_class: dict[str, Tally] = field(default_factory=dict)  # a class with its correct: side


def run(cases: Iterable[Case]) -> Result:
    by_family = {family: Tally() for family in FAMILIES}
    total = Tally()
    misses: list[tuple[Case, Outcome]] = []
    miscoded: list[tuple[Case, Outcome]] = []
    limits: list[tuple[Case, Outcome]] = []
    fixed_limits: list[tuple[Case, Outcome]] = []
    by_class: dict[str, Tally] = {}
    for case in cases:
        outcome = evaluate(case)
        if (
            outcome.verdict == "error"
            and case.expect_error is not None
            and outcome.code == case.expect_error
        ):  # refused as a result no claim can be judged against: the wrong output is rejected
            outcome = Outcome("unsupported", None, outcome.detail)
        name = case.failure_class.removeprefix("correct:").split(":")[0]
        for tally in (
            by_family.setdefault(case.family, Tally()),
            total,
            by_class.setdefault(name, Tally()),
        ):
            tally.classes.add(case.failure_class)
            if case.label == "unsupported":
                tally.wrong += 1
            else:
                tally.correct += 1
            if outcome.verdict == "error":
                tally.errors += 1
            elif outcome.verdict != case.label:
                if case.label == "unsupported":
                    tally.false_pass += 1
                else:
                    tally.false_reject += 1
            elif case.expect_code is not None and outcome.code != case.expect_code:
                tally.wrong_code += 1
        if case.known_limit:
            (limits if outcome.verdict != case.label else fixed_limits).append((case, outcome))
        elif outcome.verdict != case.label:
            misses.append((case, outcome))
        elif case.expect_code is not None and outcome.code != case.expect_code:
            miscoded.append((case, outcome))
    return Result(by_family, total, misses, miscoded, limits, fixed_limits, by_class)


def _rate(count: int, of: int) -> str:
    return f"{count} / {of:,} ({100 * count / of:.2f} %)" if of else "—"


def markdown(result: Result) -> str:
    """The per-family false-pass / false-reject table, in markdown (for docs/measured.md)."""
    lines = [
        "| family | failure classes | wrong outputs | false passes | correct outputs "
        "| false rejects | errors | other reason code |",
        "|---|---|---|---|---|---|---|---|",
    ]
    rows = [*result.by_family.items(), ("**all**", result.total)]
    for family, tally in rows:
        wrong_classes = sorted(c for c in tally.classes if not c.startswith("correct:"))
        lines.append(
            f"| {family} | {len(wrong_classes)} | {tally.wrong:,} "
            f"| {_rate(tally.false_pass, tally.wrong)} | {tally.correct:,} "
            f"| {_rate(tally.false_reject, tally.correct)} | {tally.errors} | {tally.wrong_code} |"
        )
    return "\n".join(lines)


def describe(case: Case, outcome: Outcome) -> str:
    """A miss, with what it takes to reproduce it."""
    return (
        f"{case.id}: labelled {case.label}, checker said {outcome.verdict}"
        f" ({outcome.code}) — {outcome.detail[:300]}\n"
        f"    facts={[(f.kind, f.name, f.data, dict(f.options)) for f in case.facts]!r}\n"
        f"    check={dict(case.check)!r}\n    output={dict(case.output)!r}"
    )
