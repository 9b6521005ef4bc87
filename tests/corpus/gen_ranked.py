"""Corpus cases for the ranking-reading families: superlative and ranking_prefix."""

from __future__ import annotations

import random
from collections.abc import Hashable
from fractions import Fraction
from typing import Any

from ._common import NON_FINITE, Emitter, blocks, names, order, repeat, scores
from .model import Case, FactSpec, truly_matches

FACT = "ranked"


def _fact(
    rng: random.Random, labels: list[Hashable], values: list[int | float], hib: bool
) -> tuple[list[FactSpec], dict[str, Any]]:
    """The scores as a Ranking (record_ranking) or as a Table column, at random."""
    if rng.random() < 0.5:
        spec = FactSpec(
            "ranking", FACT, list(zip(labels, values, strict=True)), {"higher_is_better": hib}
        )
        check: dict[str, Any] = {}
        if rng.random() < 0.3:
            check["higher_is_better"] = hib
        return [spec], check
    rows = [
        {"name": label, "score": value, "units": rng.randrange(1, 99)}
        for label, value in zip(labels, values, strict=True)
    ]
    check = {"column": "score"}
    if not hib or rng.random() < 0.3:
        check["higher_is_better"] = hib
    return [FactSpec("table", FACT, rows, {"key": "name"})], check


def _setup(
    rng: random.Random,
    *,
    n: tuple[int, int] = (3, 14),
    style: str | None = None,
    top_tie: int = 0,
    ints: bool | None = None,
    hib: bool | None = None,
) -> tuple[list[Hashable], list[int | float], bool, list[int]]:
    size = rng.randint(*n)
    labels = names(rng, size, ints=rng.random() < 0.2 if ints is None else ints)
    values = scores(rng, size, style or rng.choice(("int", "float", "mixed", "large")))
    better = rng.random() < 0.75 if hib is None else hib
    ordering = order(values, better)
    if top_tie:
        for position in ordering[1:top_tie]:
            values[position] = values[ordering[0]]
        ordering = order(values, better)
    return labels, values, better, ordering


def superlative_cases(rng: random.Random, per_class: int) -> list[Case]:
    cases: list[Case] = []
    emit = Emitter("superlative", cases, FACT)

    def unique_top(rng: random.Random, **kw: Any) -> tuple[Any, ...] | None:
        labels, values, hib, ordering = _setup(rng, **kw)
        top = blocks(values, ordering)[0]
        if len(top) > 1:
            return None
        return labels, values, hib, ordering

    def wrong_winner(rng: random.Random) -> bool:
        labels, values, hib, ordering = _setup(rng, top_tie=rng.choice((0, 0, 2)))
        runs = blocks(values, ordering)
        if len(runs) < 2:
            return False
        pick = rng.choice([i for run in runs[1:] for i in run])
        facts, check = _fact(rng, labels, values, hib)
        if rng.random() < 0.3:  # a tie pick is allowed, but only among the tied leaders
            check["allow_tie_pick"] = True
        emit("wrong_winner", "unsupported", facts, check, {"winner": labels[pick]}, "wrong_winner")
        return True

    def invented_score(rng: random.Random) -> bool:
        found = unique_top(rng)
        if found is None:
            return False
        labels, values, hib, ordering = found
        best = values[ordering[0]]
        tolerance = rng.choice((0, 0, 0.001, 2))
        if isinstance(best, int) and best > 2**53 and rng.random() < 0.5:
            claim: int | float = float(best)  # a large int rounded through a float
        elif rng.random() < 0.4:
            claim = values[rng.choice(ordering[1:])]
        else:
            claim = best + rng.choice((-1, 1)) * (
                tolerance * rng.uniform(1.5, 5) or rng.choice((1, 0.01, 1e-9))
            )
        if truly_matches(claim, Fraction(best), tolerance):
            return False
        facts, check = _fact(rng, labels, values, hib)
        check.update(score_field="score", tolerance=tolerance)
        output = {"winner": labels[ordering[0]], "score": claim}
        emit("invented_score", "unsupported", facts, check, output, "score_mismatch")
        return True

    def unranked_entity(rng: random.Random) -> bool:
        labels, values, hib, ordering = _setup(rng)
        if rng.random() < 0.15:  # ints 0 and 1 among the names: True and False are not them
            labels[ordering[0]], labels[ordering[-1]] = 1, 0
            claim = rng.choice((True, False))
            facts, check = _fact(rng, labels, values, hib)
            emit("unranked_entity", "unsupported", facts, check, {"winner": claim}, "not_ranked")
            return True
        best = labels[ordering[0]]
        if isinstance(best, int):
            claim: Any = rng.choice((str(best), float(best), max(labels) + 1))  # type: ignore[type-var]
        else:
            claim = rng.choice(
                (f"{best}s", "unknown", f"{best} {labels[ordering[-1]]}", best.upper())
            )
        if claim in labels and type(claim) is type(best):
            return False
        facts, check = _fact(rng, labels, values, hib)
        emit("unranked_entity", "unsupported", facts, check, {"winner": claim}, "not_ranked")
        return True

    def flattened_tie(rng: random.Random) -> bool:
        labels, values, hib, ordering = _setup(rng, top_tie=rng.randint(2, 4))
        top = blocks(values, ordering)[0]
        if len(top) < 2:
            return False
        facts, check = _fact(rng, labels, values, hib)
        output = {"winner": labels[rng.choice(top)]}
        emit("flattened_tie", "unsupported", facts, check, output, "tie_flattened")
        return True

    def min_max_flip(rng: random.Random) -> bool:
        labels, values, hib, ordering = _setup(rng)
        runs = blocks(values, ordering)
        if len(runs) < 2 or len(runs[-1]) != 1:
            return False
        facts, check = _fact(rng, labels, values, hib)
        output = {"winner": labels[runs[-1][0]]}
        emit("min_max_flip", "unsupported", facts, check, output, "wrong_winner")
        return True

    def numeric_string(rng: random.Random) -> bool:
        found = unique_top(rng)
        if found is None:
            return False
        labels, values, hib, ordering = found
        facts, check = _fact(rng, labels, values, hib)
        check["score_field"] = "score"
        best = values[ordering[0]]
        claim = rng.choice((str(best), repr(best), f" {best}", f"{best:,}"))
        output = {"winner": labels[ordering[0]], "score": claim}
        emit("numeric_string", "unsupported", facts, check, output, "not_a_number")
        return True

    def non_finite(rng: random.Random) -> bool:
        found = unique_top(rng)
        if found is None:
            return False
        labels, values, hib, ordering = found
        facts, check = _fact(rng, labels, values, hib)
        check.update(
            score_field="score",
            tolerance=rng.choice((0, 1e9)),
            rel_tolerance=rng.choice((None, 1.0)),
        )
        output = {"winner": labels[ordering[0]], "score": rng.choice(NON_FINITE)}
        emit("non_finite_score", "unsupported", facts, check, output, "not_a_number")
        return True

    def bool_as_number(rng: random.Random) -> bool:
        size = rng.randint(2, 10)
        labels = names(rng, size)
        hib = rng.random() < 0.5
        best = rng.choice((0, 1))
        if hib:
            values: list[int | float] = [best] + [best - rng.randint(1, 9) for _ in range(size - 1)]
        else:
            values = [best] + [best + rng.randint(1, 9) for _ in range(size - 1)]
        rng.shuffle(values)
        ordering = order(values, hib)
        facts, check = _fact(rng, labels, values, hib)
        output: dict[str, Any] = {"winner": labels[ordering[0]]}
        if rng.random() < 0.6:
            check["score_field"] = "score"
            output["score"] = bool(best)
            code = "not_a_number"
        else:
            check["rank_field"] = "rank"
            output["rank"] = True
            code = "not_an_integer"
        emit("bool_as_number", "unsupported", facts, check, output, code)
        return True

    def inconsistent_rank(rng: random.Random) -> bool:
        found = unique_top(rng)
        if found is None:
            return False
        labels, values, hib, ordering = found
        claim = rng.choice((2, 3, 0, -1, 1.0, "1", "#1", None, [1]))
        facts, check = _fact(rng, labels, values, hib)
        check["rank_field"] = "rank"
        output = {"winner": labels[ordering[0]], "rank": claim}
        code = "rank_mismatch" if type(claim) is int else "not_an_integer"
        emit("inconsistent_rank", "unsupported", facts, check, output, code)
        return True

    def sparse_column(rng: random.Random, *, label: str = "unsupported") -> bool:
        """A Table whose score column is missing in some rows, ranked with on_missing="skip"."""
        labels, values, hib, ordering = _setup(rng, n=(4, 14))
        gaps = set(rng.sample(range(len(labels)), rng.randint(1, len(labels) // 2)))
        kept = [i for i in ordering if i not in gaps]
        if len(kept) > 1 and values[kept[0]] == values[kept[1]]:
            return False
        rows = []
        for i, name in enumerate(labels):
            row: dict[str, Any] = {"name": name, "units": rng.randrange(1, 99)}
            if i not in gaps:
                row["score"] = values[i]
            rows.append(row)
        check = {"column": "score", "higher_is_better": hib, "on_missing": "skip"}
        facts = [FactSpec("table", FACT, rows, {"key": "name"})]
        if label == "supported":
            emit(
                "correct:sparse_column_skipped",
                "supported",
                facts,
                check,
                {"winner": labels[kept[0]]},
            )
        else:
            claim = labels[rng.choice(sorted(gaps))]
            emit("unranked_entity", "unsupported", facts, check, {"winner": claim}, "not_ranked")
        return True

    # -- supported --

    def correct(rng: random.Random) -> bool:
        found = unique_top(rng)
        if found is None:
            return False
        labels, values, hib, ordering = found
        facts, check = _fact(rng, labels, values, hib)
        output: dict[str, Any] = {"winner": labels[ordering[0]]}
        if rng.random() < 0.6:
            check["score_field"] = "score"
            output["score"] = values[ordering[0]]
        if rng.random() < 0.4:
            check["rank_field"] = "rank"
            output["rank"] = 1
        emit("correct:argmax", "supported", facts, check, output)
        return True

    def tie_pick(rng: random.Random) -> bool:
        labels, values, hib, ordering = _setup(rng, top_tie=rng.randint(2, 4))
        top = blocks(values, ordering)[0]
        if len(top) < 2:
            return False
        facts, check = _fact(rng, labels, values, hib)
        check["allow_tie_pick"] = True
        pick = rng.choice(top)
        output: dict[str, Any] = {"winner": labels[pick]}
        if rng.random() < 0.5:
            check["score_field"] = "score"
            output["score"] = values[pick]
        emit("correct:reordered_tie_pick", "supported", facts, check, output)
        return True

    def within_tolerance(rng: random.Random) -> bool:
        found = unique_top(rng, style=rng.choice(("float", "int", "mixed")))
        if found is None:
            return False
        labels, values, hib, ordering = found
        best = values[ordering[0]]
        facts, check = _fact(rng, labels, values, hib)
        check["score_field"] = "score"
        if rng.random() < 0.5:
            tolerance = rng.choice((0.5, 0.01, 1e-6))
            claim = best + rng.uniform(-0.9, 0.9) * tolerance
            check["tolerance"] = tolerance
            ok = truly_matches(claim, Fraction(best), tolerance)
        else:
            rel = rng.choice((0.01, 1e-3, 1e-9))
            claim = best * (1 + rng.uniform(-0.9, 0.9) * rel)
            check["rel_tolerance"] = rel
            ok = truly_matches(claim, Fraction(best), 0, rel)
        if not ok:
            return False
        output = {"winner": labels[ordering[0]], "score": claim}
        emit("correct:within_tolerance", "supported", facts, check, output)
        return True

    def int_as_float(rng: random.Random) -> bool:
        found = unique_top(rng, style="int")
        if found is None:
            return False
        labels, values, hib, ordering = found
        facts, check = _fact(rng, labels, values, hib)
        check["score_field"] = "score"
        output = {"winner": labels[ordering[0]], "score": float(values[ordering[0]])}
        emit("correct:int_vs_float", "supported", facts, check, output)
        return True

    def large_ints(rng: random.Random) -> bool:
        found = unique_top(rng, style="large")
        if found is None:
            return False
        labels, values, hib, ordering = found
        facts, check = _fact(rng, labels, values, hib)
        check["score_field"] = "score"
        output = {"winner": labels[ordering[0]], "score": values[ordering[0]]}
        emit("correct:large_ints", "supported", facts, check, output)
        return True

    def lower_is_better(rng: random.Random) -> bool:
        found = unique_top(rng, hib=False)
        if found is None:
            return False
        labels, values, hib, ordering = found
        facts, check = _fact(rng, labels, values, hib)
        emit("correct:lower_is_better", "supported", facts, check, {"winner": labels[ordering[0]]})
        return True

    wrong = (
        wrong_winner, invented_score, unranked_entity, flattened_tie, min_max_flip,
        numeric_string, bool_as_number, inconsistent_rank, non_finite,
    )  # fmt: skip
    right = (correct, tie_pick, within_tolerance, int_as_float, large_ints, lower_is_better)
    for make in wrong:
        repeat(rng, per_class, make)
    repeat(rng, per_class // 2, sparse_column)
    repeat(rng, per_class // 2, lambda rng: sparse_column(rng, label="supported"))
    for make in right:
        repeat(rng, per_class + per_class // 3, make)
    return cases


def prefix_cases(rng: random.Random, per_class: int) -> list[Case]:
    cases: list[Case] = []
    emit = Emitter("ranking_prefix", cases, FACT)

    def with_boundary(rng: random.Random, **kw: Any) -> tuple[Any, ...] | None:
        """A ranking and a k whose cut falls between two tie blocks."""
        kw.setdefault("style", rng.choice(("int", "float")))
        labels, values, hib, ordering = _setup(rng, n=(4, 16), **kw)
        runs = blocks(values, ordering)
        cuts = [sum(len(run) for run in runs[: i + 1]) for i in range(len(runs) - 1)]
        cuts = [cut for cut in cuts if cut >= 2] or [c for c in cuts if c >= 1]
        if not cuts:
            return None
        return labels, values, hib, ordering, rng.choice(cuts)

    def claim_of(labels: list[Hashable], positions: list[int]) -> list[Hashable]:
        return [labels[i] for i in positions]

    def invented_order(rng: random.Random) -> bool:
        found = with_boundary(rng)
        if found is None:
            return False
        labels, values, hib, ordering, k = found
        prefix = ordering[:k]
        shuffled = prefix[:]
        rng.shuffle(shuffled)
        if all(values[a] == values[b] for a, b in zip(shuffled, prefix, strict=True)):
            return False
        facts, check = _fact(rng, labels, values, hib)
        check.update(field="top", k=rng.choice((k, None)))
        emit(
            "invented_order",
            "unsupported",
            facts,
            check,
            {"top": claim_of(labels, shuffled)},
            "order_mismatch",
        )
        return True

    def interloper(rng: random.Random) -> bool:
        found = with_boundary(rng)
        if found is None:
            return False
        labels, values, hib, ordering, k = found
        claim = claim_of(labels, ordering[:k])
        slot = rng.randrange(k)
        if isinstance(claim[slot], int) and rng.random() < 0.3:
            claim[slot] = rng.choice((float(claim[slot]), str(claim[slot])))  # type-strict names
        elif rng.random() < 0.6:
            claim[slot] = labels[rng.choice(ordering[k:])]
        else:
            claim[slot] = f"{labels[ordering[slot]]}-x" if isinstance(labels[0], str) else -7
        facts, check = _fact(rng, labels, values, hib)
        check.update(field="top", k=rng.choice((k, None)), ordered=rng.random() < 0.7)
        emit("interloper", "unsupported", facts, check, {"top": claim}, "interloper")
        return True

    def repeated(rng: random.Random) -> bool:
        found = with_boundary(rng)
        if found is None:
            return False
        labels, values, hib, ordering, k = found
        claim = claim_of(labels, ordering[:k])
        a, b = rng.sample(range(k), 2)
        claim[b] = claim[a]
        facts, check = _fact(rng, labels, values, hib)
        check.update(field="top", k=rng.choice((k, None)), ordered=rng.random() < 0.7)
        emit("repeat", "unsupported", facts, check, {"top": claim}, "repeated_name")
        return True

    def tie_cut(rng: random.Random) -> bool:
        labels, values, hib, ordering = _setup(rng, n=(4, 14), style="int")
        k = rng.randint(1, len(labels) - 1)
        values[ordering[k]] = values[ordering[k - 1]]  # positions k-1 and k now tie
        ordering = order(values, hib)
        facts, check = _fact(rng, labels, values, hib)
        check.update(field="top", k=rng.choice((k, None)), ordered=rng.random() < 0.7)
        output = {"top": claim_of(labels, ordering[:k])}
        emit("tie_cut", "unsupported", facts, check, output, "tie_cut")
        return True

    def bare_string(rng: random.Random) -> bool:
        found = with_boundary(rng, ints=False)
        if found is None:
            return False
        labels, values, hib, ordering, k = found
        facts, check = _fact(rng, labels, values, hib)
        check.update(field="top", k=rng.choice((k, 1, None)))
        claim = rng.choice((labels[ordering[0]], ", ".join(str(labels[i]) for i in ordering[:k])))
        emit("bare_string", "unsupported", facts, check, {"top": claim}, "not_a_list")
        return True

    def wrong_length(rng: random.Random) -> bool:
        found = with_boundary(rng)
        if found is None:
            return False
        labels, values, hib, ordering, k = found
        length = rng.choice([n for n in (k - 1, k + 1) if 0 <= n <= len(labels)])
        facts, check = _fact(rng, labels, values, hib)
        check.update(field="top", k=k)
        emit(
            "wrong_length",
            "unsupported",
            facts,
            check,
            {"top": claim_of(labels, ordering[:length])},
            "wrong_length",
        )
        return True

    # -- supported --

    def exact_prefix(rng: random.Random) -> bool:
        found = with_boundary(rng, style=rng.choice(("int", "float", "large")))
        if found is None:
            return False
        labels, values, hib, ordering, k = found
        facts, check = _fact(rng, labels, values, hib)
        check.update(field="top", k=rng.choice((k, None)))
        emit(
            "correct:exact_prefix",
            "supported",
            facts,
            check,
            {"top": claim_of(labels, ordering[:k])},
        )
        return True

    def reordered_ties(rng: random.Random) -> bool:
        labels, values, hib, ordering = _setup(rng, n=(4, 14), style="int")
        for position in range(1, len(ordering) - 1):
            if rng.random() < 0.5:
                values[ordering[position]] = values[ordering[position - 1]]
        ordering = order(values, hib)
        runs = blocks(values, ordering)
        cuts = [sum(len(run) for run in runs[: i + 1]) for i in range(len(runs))]
        k = rng.choice(cuts)
        permuted: list[int] = []
        for run in runs:
            piece = run[:]
            rng.shuffle(piece)
            permuted.extend(piece)
        if permuted[:k] == ordering[:k]:
            return False
        facts, check = _fact(rng, labels, values, hib)
        check.update(field="top", k=rng.choice((k, None)))
        emit(
            "correct:reordered_ties",
            "supported",
            facts,
            check,
            {"top": claim_of(labels, permuted[:k])},
        )
        return True

    def unordered(rng: random.Random) -> bool:
        found = with_boundary(rng)
        if found is None:
            return False
        labels, values, hib, ordering, k = found
        claim = claim_of(labels, ordering[:k])
        rng.shuffle(claim)
        facts, check = _fact(rng, labels, values, hib)
        check.update(field="top", k=rng.choice((k, None)), ordered=False)
        emit("correct:unordered_set", "supported", facts, check, {"top": claim})
        return True

    def tie_pick(rng: random.Random) -> bool:
        labels, values, hib, ordering = _setup(rng, n=(4, 14), style="int")
        k = rng.randint(1, len(labels) - 1)
        values[ordering[k]] = values[ordering[k - 1]]
        ordering = order(values, hib)
        runs = blocks(values, ordering)
        start = 0
        for run in runs:
            if start + len(run) > k:
                break
            start += len(run)
        chosen = rng.sample(run, k - start)
        claim = claim_of(labels, ordering[:start] + chosen)
        facts, check = _fact(rng, labels, values, hib)
        check.update(field="top", k=rng.choice((k, None)), allow_tie_pick=True)
        emit("correct:tie_pick", "supported", facts, check, {"top": claim})
        return True

    wrong = (invented_order, interloper, repeated, tie_cut, bare_string, wrong_length)
    right = (exact_prefix, reordered_ties, unordered, tie_pick)
    for make in wrong:
        repeat(rng, per_class, make)
    for make in right:
        repeat(rng, per_class * 3 // 2, make)
    return cases
