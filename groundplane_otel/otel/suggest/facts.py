"""Which tool results become which facts: the result's shape across the calls of each tool.

A list of rows anywhere in the result (at the root, under keys at any depth, or inside a list:
``path``, dotted, list positions as numbers) is found breadth-first: the shallowest row list
with a string column unique in it is chosen (else the shallowest row list), and the fact's
comment names the path and the other row lists seen. Rows with a string column unique in every
result are a ``table`` keyed by it; when they have exactly one numeric column, also a
``ranking`` by that column. An object whose values are all numbers is a ``ranking`` (names to
scores); any other object is a ``value``; a retrieval is ``documents``. When the calls of a tool
differ by a string argument and the results' shapes differ with it, each value of that argument
is its own fact (``arguments:``). When a tool's results change shape with no argument saying
why, the shapes are counted and a note names each with its count: rows that moved (a bare list,
later under a key) are one fact whose ``path`` lists each place, deepest first (the first the
result has is read); any other change leaves the fact on the most common shape, its comment
saying how many results fit it (the rest need a fact of their own).
"""

from __future__ import annotations

import re
from collections import Counter, deque
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from groundplane_otel.otel._engine import arguments_match
from groundplane_otel.otel.config import FactSpec
from groundplane_otel.otel.suggest.runs import ToolResult

__all__ = ["InferredFact", "infer_facts", "is_number", "matching", "where"]

MAX_SPLIT_VALUES = 8  # an argument with more distinct values is data, not a selector
MAX_SEARCH_DEPTH = 8  # how deep row lists are looked for in a result
MAX_SEARCH_NODES = 2_000  # containers looked into per result (the search is bounded)
MAX_PATHS_SHOWN = 3  # other row-list paths named in a comment


def is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


@dataclass(frozen=True, slots=True)
class InferredFact:
    """A fact declaration (``spec``) with how it was inferred (``why``, a comment) and, when
    its tool's results changed shape, what they were (``shapes``)."""

    spec: FactSpec
    why: str
    shapes: str | None = None

    def as_mapping(self) -> dict[str, Any]:
        """The fact as the policy file declares it."""
        spec = self.spec
        out: dict[str, Any] = {"tool": spec.tool}
        if spec.arguments:
            out["arguments"] = dict(spec.arguments)
        out["kind"] = spec.kind
        for name in ("key", "score", "path"):
            value = getattr(spec, name)
            if value is not None:
                out[name] = list(value) if isinstance(value, tuple) else value
        return out


@dataclass(frozen=True, slots=True)
class _Shape:
    path: str | None
    kind: str  # rows | scores | object | other | documents
    columns: tuple[str, ...] = ()
    keys: frozenset[str] = frozenset()  # string columns unique in this result
    numeric: frozenset[str] = frozenset()
    also: tuple[str, ...] = ()  # the other row lists' paths in this result
    looked: tuple[str, ...] = ()  # where rows were looked for, when none were found

    def signature(self) -> tuple[Any, ...]:
        return (self.path, self.kind, frozenset(self.columns))


def where(path: str | None) -> str:
    """A path as the comments say it: ``at the root``, ``under 'data.items'``."""
    return "at the root" if path is None else f"under {path!r}"


def _rows_shape(rows: list[Any], path: str | None, also: tuple[str, ...] = ()) -> _Shape:
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
    return _Shape(path, "rows", tuple(columns), keys, numeric, also)


def _is_rows(value: Any) -> bool:
    return isinstance(value, list) and bool(value) and all(isinstance(r, dict) for r in value)


def _step(path: str | None, key: str | int) -> str:
    return str(key) if path is None else f"{path}.{key}"


def _row_lists(payload: Any, looked: list[str]) -> list[tuple[str | None, list[Any]]]:
    """Every list of rows in ``payload``, breadth-first (shallowest first), with its dotted
    path; keys a dotted path cannot spell (empty, or holding a dot) are not followed. The
    objects and lists looked into are appended to ``looked`` (the root as "")."""
    found: list[tuple[str | None, list[Any]]] = []
    queue: deque[tuple[str | None, Any, int]] = deque([(None, payload, 0)])
    visited = 0
    while queue and visited < MAX_SEARCH_NODES:
        path, value, depth = queue.popleft()
        visited += 1
        if _is_rows(value):
            found.append((path, value))
        if depth >= MAX_SEARCH_DEPTH:
            continue
        if isinstance(value, (dict, list)):
            looked.append(path or "")
        if isinstance(value, dict):
            items: Iterable[tuple[str | int, Any]] = (
                (k, v) for k, v in value.items() if isinstance(k, str) and k and "." not in k
            )
        elif isinstance(value, list):
            items = enumerate(value)
        else:
            continue
        for key, child in items:
            if isinstance(child, (dict, list)):
                queue.append((_step(path, key), child, depth + 1))
    return found


def _keyed(rows: list[Any]) -> bool:
    """Whether some string column names each row once (the rows can be a table)."""
    first = rows[0]
    return any(
        all(isinstance(row.get(column), str) for row in rows)
        and len({row[column] for row in rows}) == len(rows)
        for column in first
    )


def shape_of(result: ToolResult) -> _Shape | None:
    """The shape of one call's result (None: not captured)."""
    payload = result.payload
    if result.retrieval:
        return _Shape(None, "documents") if isinstance(payload, list) else None
    if payload is None:
        return None
    looked: list[str] = []
    lists = _row_lists(payload, looked)
    if lists:
        path, rows = next(((p, r) for p, r in lists if _keyed(r)), lists[0])
        also = tuple(p if p is not None else "" for p, _ in lists if p != path)
        return _rows_shape(rows, path, also)
    if isinstance(payload, dict):
        if payload and all(is_number(value) for value in payload.values()):
            return _Shape(None, "scores")
        return _Shape(None, "object", looked=tuple(looked))
    return _Shape(None, "other", looked=tuple(looked))


def _looked_text(looked: Sequence[str]) -> str:
    """Where rows were looked for, for a comment: ``the root, 'data', 'data.meta'``."""
    named = [repr(path) if path else "the root" for path in looked[:MAX_PATHS_SHOWN]]
    more = len(looked) - MAX_PATHS_SHOWN
    return ", ".join(named) + (f" and {more} more" if more > 0 else "")


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


def _shape_text(kind: str, path: str | None) -> str:
    texts = {
        "documents": "retrieved documents",
        "scores": "an object of numbers",
        "object": "an object",
        "other": "neither rows nor an object",
    }
    return f"rows {where(path)}" if kind == "rows" else texts[kind]


def _shape_note(tool: str, shapes: Counter[tuple[str, str | None]], read: str, covered: int) -> str:
    """What a tool whose results changed shape returned, each shape with its count."""
    total = sum(shapes.values())
    seen = ", ".join(f"{_shape_text(*shape)} in {count}" for shape, count in shapes.most_common())
    note = f"the results of {tool} changed shape ({seen} of {total}): the fact reads {read}"
    if covered < total:
        note += (
            f"; the other {total - covered} need a fact of their own, and a check on this fact "
            "counts their runs as broken"
        )
    return note


def _depth(path: str | None) -> int:
    return 0 if path is None else path.count(".") + 1


def _facts_of(group: _Group, base: str) -> list[InferredFact]:
    shapes = group.shapes
    counted = Counter(
        (shape.kind, shape.path if shape.kind == "rows" else None) for shape in shapes
    )
    kind = Counter(shape.kind for shape in shapes).most_common(1)[0][0]
    arguments = group.arguments
    if kind != "rows":
        (_, _), fit = counted.most_common(1)[0]
        calls = f"{fit} of {len(shapes)} results"
        note = (
            _shape_note(group.tool, counted, _shape_text(kind, None), fit)
            if len(counted) > 1
            else None
        )
        if kind == "documents":
            spec = FactSpec(base, group.tool, kind="documents", arguments=arguments)
            return [InferredFact(spec, f"retrieved documents ({calls})", note)]
        if kind == "scores":
            spec = FactSpec(base, group.tool, kind="ranking", arguments=arguments)
            return [InferredFact(spec, f"an object of numbers: names to scores ({calls})", note)]
        spec = FactSpec(base, group.tool, kind="value", arguments=arguments)
        looked = next((shape.looked for shape in shapes if shape.kind == kind), ())
        searched = f"; no list of rows in it (looked in {_looked_text(looked)})" if looked else ""
        return [InferredFact(spec, f"a value{searched} ({calls})", note)]
    rows = [shape for shape in shapes if shape.kind == "rows"]
    paths = Counter(shape.path for shape in rows)
    common = _common_key(rows)
    if len(paths) > 1 and common is not None:
        # The rows moved (a bare list, later under a key): one fact reads each place, the
        # deepest first (the root, tried last, is always there).
        ordered = sorted(paths, key=lambda p: (-_depth(p), -paths[p]))
        path: str | tuple[str, ...] | None = tuple(p or "" for p in ordered)
        placed = " " + ", ".join(f"{where(p)} in {paths[p]}" for p in ordered)
        read = f"rows at the first of {[p or '' for p in ordered]} the result has"
    else:
        only = paths.most_common(1)[0][0]
        rows = [shape for shape in rows if shape.path == only]
        path = only
        placed = "" if only is None else f" {where(only)}"
        read = _shape_text("rows", only)
    note = _shape_note(group.tool, counted, read, len(rows)) if len(counted) > 1 else None
    calls = f"{len(rows)} of {len(shapes)} results"
    numeric = frozenset.intersection(*(shape.numeric for shape in rows))
    order = rows[0].columns
    key = _common_key(rows)
    others = sorted({other for shape in rows for other in shape.also})
    if others:
        shown = ", ".join(
            repr(other) if other else "the root" for other in others[:MAX_PATHS_SHOWN]
        )
        more = len(others) - MAX_PATHS_SHOWN
        placed += f", chosen over the rows under {shown}" + (
            f" and {more} more" if more > 0 else ""
        )

    def inferred(spec: FactSpec, why: str) -> InferredFact:
        return InferredFact(spec, why, note)

    if key is None:
        spec = FactSpec(base, group.tool, kind="value", path=path, arguments=arguments)
        return [inferred(spec, f"rows with no unique name column{placed} ({calls})")]
    table = FactSpec(base, group.tool, kind="table", key=key, path=path, arguments=arguments)
    found = [inferred(table, f"a table of rows keyed by {key!r}{placed} ({calls})")]
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
        found.append(inferred(ranking, f"the same rows ranked by {scores[0]!r}"))
    return found


def _common_key(rows: Sequence[_Shape]) -> str | None:
    """The first column that names each row once in every result."""
    keys = frozenset.intersection(*(shape.keys for shape in rows))
    return next((column for column in rows[0].columns if column in keys), None)


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
