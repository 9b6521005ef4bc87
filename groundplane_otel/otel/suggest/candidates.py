"""Candidate checks: what one answer does with one run's facts, as policy check entries.

Each proposal is a ``(family, arguments)`` pair in the policy file's form; it is only a
candidate: whether it holds in a run is decided by the real check (``verify.py``), never here.
Proposals read the answer's top-level fields against each typed fact of the run:

- a Table (or a Ranking): a field naming the best (or worst) row by a numeric column →
  ``superlative`` (with ``score_field`` when another field quotes that row's score); a list of
  names in top-k order → ``ranking_prefix``; names that are keys → ``entities_recorded``; a
  number read from the row another field names → ``row_integrity``; a number equal to a
  column's sum, mean or count (also under a filter a tool argument names) →
  ``aggregate_reconciles``; a number equal to the difference of two named rows → ``comparison``;
- a value (an object): a field equal to one of its members → ``field_matches_fact``.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from groundplane_otel.facts import Table
from groundplane_otel.otel.suggest.facts import is_number
from groundplane_otel.ranking import Ranking

__all__ = ["Proposal", "proposals", "subject"]

Proposal = tuple[str, dict[str, Any]]


def _same(left: Any, right: Any) -> bool:
    """Equal numbers (a claim quoting a computed number, not a bool)."""
    if not (is_number(left) and is_number(right)):
        return False
    return bool(left == right or math.isclose(left, right, rel_tol=1e-9, abs_tol=1e-12))


def subject(family: str, arguments: Mapping[str, Any]) -> tuple[str, str]:
    """What a check is about: one check per (family, subject) is kept."""
    for name in ("winner_field", "key_field", "delta_field", "field"):
        if name in arguments:
            return family, str(arguments[name])
    if "fields" in arguments:
        return family, ",".join(map(str, arguments["fields"]))
    return family, ""


def _columns(rows: Sequence[Mapping[str, Any]]) -> list[str]:
    first = rows[0] if rows else {}
    return [c for c in first if all(is_number(row.get(c)) for row in rows)]


def _ordered(names_scores: list[tuple[Any, Any]], higher: bool) -> list[Any]:
    return [name for name, _ in sorted(names_scores, key=lambda p: p[1], reverse=higher)]


def _unique_best(pairs: list[tuple[Any, Any]], higher: bool) -> Any:
    if not pairs:
        return None
    best = max(p[1] for p in pairs) if higher else min(p[1] for p in pairs)
    tops = [name for name, score in pairs if score == best]
    return tops[0] if len(tops) == 1 else None


def _ranked(
    fact: str, pairs: list[tuple[Any, Any]], answer: Mapping[str, Any], column: str | None
) -> Iterator[Proposal]:
    """superlative / ranking_prefix over ``pairs`` (name, score), by ``column`` of a Table."""
    scores = dict(pairs)
    base: dict[str, Any] = {"fact": fact}
    if column is not None:
        base["column"] = column
    for higher in (True, False):
        direction = {} if higher else {"higher_is_better": False}
        best = _unique_best(pairs, higher)
        order = _ordered(pairs, higher)
        for name, value in answer.items():
            if isinstance(value, str) and best is not None and value == best:
                quoted = [g for g, v in answer.items() if g != name and _same(v, scores[best])]
                score = {"score_field": quoted[0]} if quoted else {}
                yield "superlative", {**base, "winner_field": name, **score, **direction}
            if (
                isinstance(value, list)
                and len(value) >= 2
                and value == order[: len(value)]
                and len(value) <= len(order)
            ):
                yield "ranking_prefix", {**base, "field": name, "k": len(value), **direction}


def _named(fact: str, keys: set[Any], answer: Mapping[str, Any]) -> Iterator[Proposal]:
    for name, value in answer.items():
        names = value if isinstance(value, list) else [value]
        if names and all(isinstance(v, str) and v in keys for v in names):
            yield "entities_recorded", {"fact": fact, "fields": [name]}


def _aggregates(
    fact: str,
    rows: Sequence[Mapping[str, Any]],
    columns: list[str],
    answer: Mapping[str, Any],
    where: dict[str, Any] | None,
) -> Iterator[Proposal]:
    extra = {"where": where} if where else {}
    numbers = [(n, v) for n, v in answer.items() if is_number(v)]
    for name, value in numbers:
        if rows and value == len(rows) and isinstance(value, int):
            yield "aggregate_reconciles", {"fact": fact, "field": name, "op": "count", **extra}
        for column in columns:
            cells = [row[column] for row in rows]
            if not cells:
                continue
            total = sum(cells)
            if _same(value, total):
                yield (
                    "aggregate_reconciles",
                    {"fact": fact, "field": name, "column": column, "op": "sum", **extra},
                )
            elif _same(value, total / len(cells)):
                yield (
                    "aggregate_reconciles",
                    {"fact": fact, "field": name, "column": column, "op": "mean", **extra},
                )


def _filters(
    rows: Sequence[Mapping[str, Any]], arguments: Sequence[Mapping[str, Any]]
) -> Iterator[tuple[dict[str, Any], list[Mapping[str, Any]]]]:
    """(where, rows it selects) for each string tool argument naming some, not all, rows."""
    seen: set[tuple[str, str]] = set()
    first = rows[0] if rows else {}
    for call in arguments:
        for value in call.values():
            if not isinstance(value, str):
                continue
            for column in first:
                selected = [row for row in rows if row.get(column) == value]
                if 0 < len(selected) < len(rows) and (column, value) not in seen:
                    seen.add((column, value))
                    yield {column: value}, selected


def _rows(
    fact: str, table: Table, answer: Mapping[str, Any], arguments: Sequence[Mapping[str, Any]]
) -> Iterator[Proposal]:
    rows = table.rows
    columns = [c for c in _columns(rows) if c != table.key]
    by_key = {row[table.key]: row for row in rows}
    for column in columns:
        yield from _ranked(fact, [(row[table.key], row[column]) for row in rows], answer, column)
    yield from _named(fact, set(by_key), answer)
    yield from _aggregates(fact, rows, columns, answer, None)
    for where, selected in _filters(rows, arguments):
        yield from _aggregates(fact, selected, columns, answer, where)
    named = [(n, by_key[v]) for n, v in answer.items() if isinstance(v, str) and v in by_key]
    numbers = [(n, v) for n, v in answer.items() if is_number(v)]
    for key_field, row in named:
        fields: dict[str, str] = {}
        for name, value in numbers:
            found = next((c for c in columns if _same(value, row[c])), None)
            if found is not None:
                fields[name] = found
        if fields:
            yield "row_integrity", {"fact": fact, "key_field": key_field, "fields": fields}
    for a_field, a_row in named:
        for b_field, b_row in named:
            if a_row is b_row:
                continue
            for name, value in numbers:
                for column in columns:
                    if _same(value, a_row[column] - b_row[column]):
                        yield (
                            "comparison",
                            {
                                "fact": fact,
                                "a_field": a_field,
                                "b_field": b_field,
                                "delta_field": name,
                                "column": column,
                            },
                        )


def _value(fact: str, value: Mapping[str, Any], answer: Mapping[str, Any]) -> Iterator[Proposal]:
    for name, claimed in answer.items():
        for member, recorded in value.items():
            if not isinstance(member, str) or isinstance(recorded, (dict, list)):
                continue
            if _same(claimed, recorded) or (
                type(claimed) is type(recorded) and not is_number(claimed) and claimed == recorded
            ):
                yield "field_matches_fact", {"fact": fact, "field": name, "path": member}


def proposals(
    facts: Mapping[str, Any],
    answer: Mapping[str, Any],
    arguments: Sequence[Mapping[str, Any]] = (),
) -> Iterator[Proposal]:
    """The candidate checks one JSON answer suggests against one run's typed facts."""
    for fact, value in facts.items():
        if isinstance(value, Table):
            yield from _rows(fact, value, answer, arguments)
        elif isinstance(value, Ranking):
            pairs = list(zip(value.names, value.scores, strict=True))
            yield from _ranked(fact, pairs, answer, None)
            yield from _named(fact, set(value.names), answer)
        elif isinstance(value, dict):
            yield from _value(fact, value, answer)
