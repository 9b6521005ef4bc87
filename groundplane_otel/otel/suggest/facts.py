"""Which tool results become which facts: the result's shape across the calls of each tool.

A list of rows (at the root, or under one key: ``path``) with a string column unique in every
result is a ``table`` keyed by it; when the rows have exactly one numeric column, it is also a
``ranking`` by that column. An object whose values are all numbers is a ``ranking`` (names to
scores); any other object is a ``value``; a retrieval is ``documents``. When the calls of a tool
differ by a string argument and the results' shapes differ with it, each value of that argument
is its own fact (``arguments:``).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from groundplane_otel.otel._engine.capture import arguments_match
from groundplane_otel.otel.config import FactSpec
from groundplane_otel.otel.suggest.runs import ToolResult

__all__ = ["InferredFact", "infer_facts", "is_number", "matching"]

MAX_SPLIT_VALUES = 8  # an argument with more distinct values is data, not a selector


def is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


@dataclass(frozen=True, slots=True)
class InferredFact:
    """A fact declaration (``spec``) with how it was inferred (``why``, a comment)."""

    spec: FactSpec
    why: str

    def as_mapping(self) -> dict[str, Any]:
        """The fact as the policy file declares it."""
        spec = self.spec
        out: dict[str, Any] = {"tool": spec.tool}
        if spec.arguments:
            out["arguments"] = dict(spec.arguments)
        out["kind"] = spec.kind
        for name in ("key", "score", "path"):
            if getattr(spec, name) is not None:
                out[name] = getattr(spec, name)
        return out


@dataclass(frozen=True, slots=True)
class _Shape:
    path: str | None
    kind: str  # rows | scores | object | other | documents
    columns: tuple[str, ...] = ()
    keys: frozenset[str] = frozenset()  # string columns unique in this result
    numeric: frozenset[str] = frozenset()

    def signature(self) -> tuple[Any, ...]:
        return (self.path, self.kind, frozenset(self.columns))


def _rows_shape(rows: list[Any], path: str | None) -> _Shape:
    columns: dict[str, None] = {}
    for row in rows:
        columns.update(dict.fromkeys(row))
    keys = frozenset(
        column
        for column in columns
        if all(isinstance(row.get(column), str) for row in rows)
        and len({row[column] for row in rows}) == len(rows)
    )
    numeric = frozenset(
        column for column in columns if all(is_number(row.get(column)) for row in rows)
    )
    return _Shape(path, "rows", tuple(columns), keys, numeric)


def _is_rows(value: Any) -> bool:
    return isinstance(value, list) and bool(value) and all(isinstance(r, dict) for r in value)


def shape_of(result: ToolResult) -> _Shape | None:
    """The shape of one call's result (None: not captured)."""
    payload = result.payload
    if result.retrieval:
        return _Shape(None, "documents") if isinstance(payload, list) else None
    if payload is None:
        return None
    if _is_rows(payload):
        return _rows_shape(payload, None)
    if isinstance(payload, dict):
        for key, value in payload.items():
            if _is_rows(value):
                return _rows_shape(value, key)
        if payload and all(is_number(value) for value in payload.values()):
            return _Shape(None, "scores")
        return _Shape(None, "object")
    return _Shape(None, "other")


@dataclass(slots=True)
class _Group:
    tool: str
    arguments: dict[str, Any] = field(default_factory=dict)
    shapes: list[_Shape] = field(default_factory=list)


def _name(text: str) -> str:
    return re.sub(r"\W+", "_", text).strip("_").lower() or "fact"


def _selector(results: Sequence[ToolResult], shapes: Sequence[_Shape]) -> str | None:
    """A string argument every call passes, with a few values, whose value changes the shape."""
    common = set.intersection(*(set(r.arguments) for r in results)) if results else set()
    for argument in sorted(common):
        values = [r.arguments[argument] for r in results]
        if not all(isinstance(v, str) for v in values):
            continue
        distinct = set(values)
        if not 2 <= len(distinct) <= MAX_SPLIT_VALUES:
            continue
        by_value: dict[str, set[tuple[Any, ...]]] = {}
        for value, shape in zip(values, shapes, strict=True):
            by_value.setdefault(value, set()).add(shape.signature())
        signatures = [frozenset(s) for s in by_value.values()]
        if len(set(signatures)) > 1 and all(len(s) == 1 for s in signatures):
            return argument
    return None


def _facts_of(group: _Group, base: str) -> list[InferredFact]:
    shapes = group.shapes
    kinds = Counter(shape.kind for shape in shapes)
    kind, seen = kinds.most_common(1)[0]
    calls = f"{seen} of {len(shapes)} results"
    arguments = group.arguments
    if kind == "documents":
        spec = FactSpec(base, group.tool, kind="documents", arguments=arguments)
        return [InferredFact(spec, f"retrieved documents ({calls})")]
    if kind == "scores":
        spec = FactSpec(base, group.tool, kind="ranking", arguments=arguments)
        return [InferredFact(spec, f"an object of numbers: names to scores ({calls})")]
    if kind != "rows":
        spec = FactSpec(base, group.tool, kind="value", arguments=arguments)
        return [InferredFact(spec, f"a value ({calls})")]
    rows = [shape for shape in shapes if shape.kind == "rows"]
    path = Counter(shape.path for shape in rows).most_common(1)[0][0]
    rows = [shape for shape in rows if shape.path == path]
    keys = frozenset.intersection(*(shape.keys for shape in rows))
    numeric = frozenset.intersection(*(shape.numeric for shape in rows))
    order = rows[0].columns
    key = next((column for column in order if column in keys), None)
    if key is None:
        spec = FactSpec(base, group.tool, kind="value", path=path, arguments=arguments)
        return [InferredFact(spec, f"rows with no unique name column ({calls})")]
    table = FactSpec(base, group.tool, kind="table", key=key, path=path, arguments=arguments)
    found = [InferredFact(table, f"a table of rows keyed by {key!r} ({calls})")]
    scores = [column for column in order if column in numeric]
    if len(scores) == 1:
        ranking = FactSpec(
            f"{base}_ranking",
            group.tool,
            kind="ranking",
            key=key,
            score=scores[0],
            path=path,
            arguments=arguments,
        )
        found.append(InferredFact(ranking, f"the same rows ranked by {scores[0]!r}"))
    return found


def infer_facts(results: Iterable[ToolResult]) -> list[InferredFact]:
    """The facts the tool results of the kept runs support, one tool at a time."""
    by_tool: dict[str, list[tuple[ToolResult, _Shape]]] = {}
    for result in results:
        shape = shape_of(result)
        if shape is not None:
            by_tool.setdefault(result.tool, []).append((result, shape))
    facts: list[InferredFact] = []
    used: set[str] = set()
    for tool, pairs in sorted(by_tool.items()):
        calls = [result for result, _ in pairs]
        shapes = [shape for _, shape in pairs]
        argument = _selector(calls, shapes)
        groups: list[tuple[str, _Group]] = []
        if argument is None:
            groups.append((_name(tool), _Group(tool, {}, shapes)))
        else:
            for value in sorted({str(call.arguments[argument]) for call in calls}):
                picked = [s for c, s in pairs if c.arguments[argument] == value]
                groups.append(
                    (f"{_name(tool)}_{_name(value)}", _Group(tool, {argument: value}, picked))
                )
        for base, group in groups:
            name = base
            while name in used or f"{name}_ranking" in used:
                name += "_"
            for fact in _facts_of(group, name):
                used.add(fact.spec.name)
                facts.append(fact)
    return facts


def matching(facts: Sequence[InferredFact], result: ToolResult) -> list[InferredFact]:
    """The facts ``result`` feeds (its tool, and its arguments include the declared ones)."""
    return [
        fact
        for fact in facts
        if fact.spec.tool == result.tool and arguments_match(fact.spec, result.arguments)
    ]
