"""The declarative policy file: facts, boundaries, checks and mode, validated at load.

YAML is read with ``yaml.safe_load`` only: a policy is plain data, no tag can construct an
object or run code (``!!python/...`` is refused). Everything is validated before the guard
starts — unknown keys, wrong types, unknown check families, bad check arguments, a check
reading a fact its boundary does not list — and a failure is a ``PolicyError`` naming the file,
the line, the key path and the fix::

    version: 1
    mode: enforce                 # or observe
    facts:
      campaign_ctr: {tool: warehouse.query, kind: ranking, key: campaign, score: ctr, path: rows}
    boundaries:
      campaign_report:
        facts: [campaign_ctr]
        match: {agent_name: campaign-analyst}
        checks:
          - superlative: {winner_field: winner, score_field: ctr}
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
from collections.abc import Mapping
from functools import partial
from typing import Any, Final, Literal, cast

from groundplane_otel._runner import ReportMode
from groundplane_otel.otel._rules import fact_not_declared, scalar_attributes
from groundplane_otel.otel.config import (
    ANSWERS,
    EVENT_SINKS,
    FACT_KINDS,
    MODES,
    BoundarySpec,
    EventSink,
    FactKind,
    FactSpec,
    GuardConfig,
    Limits,
    MatchSpec,
    Mode,
)
from groundplane_otel.otel.policy._checks import build_check
from groundplane_otel.otel.policy._evidence import check_evidence
from groundplane_otel.otel.policy._reader import KeyPath, PolicyError, Reader, show
from groundplane_otel.otel.policy._yaml import read_yaml

__all__ = ["POLICY_VERSION", "PolicyError", "load_policy", "policy_from_mapping"]

POLICY_VERSION: Final = 1
_TOP: Final = (
    "version",
    "mode",
    "events",
    "capture_content",
    "evaluation_events",
    "strict",
    "coverage_after",
    "limits",
    "facts",
    "boundaries",
)
_LIMITS: Final = tuple(field.name for field in dataclasses.fields(Limits))
_FACT: Final = (
    "tool",
    "kind",
    "key",
    "score",
    "higher_is_better",
    "exhaustive",
    "path",
    "label",
    "arguments",
    "restricted",
)
_BOUNDARY: Final = ("facts", "checks", "match", "mode", "report_mode", "answer")
_MATCH: Final = ("agent_name", "operation_name", "span_name", "attributes")
_REPORT_MODES: Final = ("all", "first")


def load_policy(path: str | os.PathLike[str]) -> GuardConfig:
    """Read and validate a YAML policy file; a PolicyError names the file, line, key and fix."""
    source = os.fspath(path)
    data, root = read_yaml(source)
    with open(source, "rb") as text:
        digest = hashlib.sha256(text.read()).hexdigest()
    return _read(Reader(source, root), data, digest)


def policy_from_mapping(data: Mapping[str, Any], source: str = "<mapping>") -> GuardConfig:
    """Validate an already-parsed policy (e.g. from JSON or a settings system)."""
    canonical = json.dumps(data, sort_keys=True, default=repr).encode("utf-8")
    return _read(Reader(source), data, hashlib.sha256(canonical).hexdigest())


def _read(reader: Reader, data: object, digest: str) -> GuardConfig:
    """The policy in ``data``; every error in it is found (each section is read on after an
    error in another) and raised as one ``PolicyError`` (``errors`` lists them)."""
    config = None
    try:
        config = _read_all(reader, data, digest)
    except PolicyError as exc:  # one that stops the reading (the top is not a mapping …)
        reader.errors.extend(exc.errors)
    reader.raise_errors()
    assert config is not None
    return config


def _read_all(reader: Reader, data: object, digest: str) -> GuardConfig | None:
    top = reader.mapping((), data, _TOP, required=("boundaries",), example=" starting `version: 1`")
    if "version" not in top:
        reader.attempt(
            lambda: reader.fail(
                (), "missing required key 'version'", "add `version: 1` as the first line"
            )
        )
    version = top.get("version", POLICY_VERSION)
    if isinstance(version, bool) or not isinstance(version, int) or version != POLICY_VERSION:
        reader.attempt(
            lambda: reader.fail(
                ("version",),
                f"unsupported policy version {show(top['version'])}",
                f"this groundplane_otel reads `version: {POLICY_VERSION}`",
            )
        )
    mode = reader.attempt(lambda: reader.choice(("mode",), top.get("mode", "enforce"), MODES))
    capture = reader.attempt(
        lambda: reader.boolean(("capture_content",), top.get("capture_content", False))
    )
    evaluations = reader.attempt(
        lambda: reader.boolean(("evaluation_events",), top.get("evaluation_events", True))
    )
    strict = reader.attempt(lambda: reader.boolean(("strict",), top.get("strict", False)))
    after = top.get("coverage_after", 20)
    if isinstance(after, bool) or not isinstance(after, int) or after < 1:
        reader.attempt(
            lambda: reader.fail(
                ("coverage_after",),
                f"expected an integer >= 1, got {show(after)}",
                "set `coverage_after:` to the number of traces (default 20)",
            )
        )
        after = 20
    events = reader.attempt(
        lambda: reader.choice(("events",), top.get("events", "span"), EVENT_SINKS)
    )
    limits = reader.attempt(lambda: _limits(reader, top.get("limits", {})))
    before = len(reader.errors)
    named = reader.attempt(lambda: list(reader.names(("facts",), top.get("facts", {}), "fact")))
    named_ok = len(reader.errors) == before  # else which facts are declared is not known
    facts = []
    for name, spec in named or []:
        fact = reader.attempt(partial(_fact, reader, name, spec))
        if fact is not None:
            facts.append(fact)
    declared = [name for name, _ in named or []] if named_ok else None  # one in error too
    by_name = {fact.name: fact for fact in facts}
    entries = reader.attempt(
        lambda: list(reader.names(("boundaries",), top.get("boundaries"), "boundary"))
    )
    boundaries = []
    for name, spec in entries or []:
        boundary = reader.attempt(partial(_boundary, reader, name, spec, declared, by_name))
        if boundary is not None:
            boundaries.append(boundary)
    if entries == []:
        reader.fail(
            ("boundaries",),
            "the policy declares no boundaries, so it checks nothing",
            "add `boundaries: {<name>: {facts: [...], checks: [...]}}`",
        )
    if reader.errors:
        return None
    return GuardConfig(
        tuple(facts),
        tuple(boundaries),
        cast(Mode, mode),
        bool(capture),
        limits or Limits(),
        policy_version=f"{version}+sha256:{digest[:12]}",
        evaluation_events=bool(evaluations),
        coverage_after=after,
        strict=bool(strict),
        events=cast(EventSink, events or "span"),
    )


def _limits(reader: Reader, raw: object) -> Limits:
    values = reader.mapping(("limits",), raw, _LIMITS)
    for key, value in values.items():
        if key == "ttl_seconds":
            valid = isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0
            expected = "a number of seconds > 0"
        else:
            valid = isinstance(value, int) and not isinstance(value, bool) and value >= 1
            expected = "an integer >= 1"
        if not valid:
            reader.fail(
                ("limits", key),
                f"expected {expected}, got {show(value)}",
                f"set `{key}:` to {expected}",
            )
    try:
        return Limits(**values)
    except ValueError as exc:  # a rule config.py adds later still fails here, located
        reader.fail(("limits",), str(exc), "correct the limits")


def _fact(reader: Reader, name: str, raw: object) -> FactSpec:
    path: KeyPath = ("facts", name)
    spec = reader.mapping(
        path,
        raw,
        _FACT,
        required=("tool",),
        example=" such as `{tool: warehouse.query, kind: ranking}`",
    )
    tool = reader.string((*path, "tool"), spec["tool"])
    kind = cast(FactKind, reader.choice((*path, "kind"), spec.get("kind", "value"), FACT_KINDS))
    key, score, label = (
        reader.optional_string((*path, field), spec.get(field))
        for field in ("key", "score", "label")
    )
    where = _path(reader, (*path, "path"), spec.get("path"))
    higher = reader.boolean((*path, "higher_is_better"), spec.get("higher_is_better", True))
    exhaustive = reader.boolean((*path, "exhaustive"), spec.get("exhaustive", True))
    restricted = reader.boolean((*path, "restricted"), spec.get("restricted", False))
    arguments = spec.get("arguments", {})
    if not isinstance(arguments, Mapping) or not all(isinstance(k, str) for k in arguments):
        reader.fail(
            (*path, "arguments"),
            f"expected a mapping of argument names, got {show(arguments)}",
            "write `arguments: {name: value}` (or leave it out)",
        )
    if kind == "table" and key is None:
        reader.fail(
            path,
            "a table fact needs `key` (the column that identifies a row)",
            "add `key: <column>`",
        )
    if kind == "documents" and (key is not None or score is not None):
        reader.fail(
            (*path, "key" if key is not None else "score"),
            "a documents fact takes no `key` or `score` (each document has its id and score)",
            "drop it",
        )
    if kind == "ranking" and (key is None) != (score is None):
        reader.fail(
            path,
            "a ranking read from rows needs both `key` and `score`",
            "add the missing one, or drop both for a {name: score} result",
        )
    try:
        return FactSpec(
            name,
            tool,
            kind,
            key,
            score,
            higher,
            exhaustive,
            where,
            label,
            arguments,
            restricted=restricted,
        )
    except ValueError as exc:  # a rule config.py adds later still fails here, located
        reader.fail(path, str(exc), "correct this fact")


def _path(reader: Reader, path: KeyPath, raw: object) -> str | tuple[str, ...] | None:
    """A fact's ``path``: a dotted string, or a list of them (the first the result has; ``''``
    is the result itself)."""
    if not isinstance(raw, list):
        return reader.optional_string(path, raw)
    if not raw:
        reader.fail(path, "expected a path or a non-empty list of paths, got []", "drop it")
    for index, step in enumerate(raw):
        if not isinstance(step, str):
            reader.fail(
                (*path, index),
                f"expected a path (a string; '' is the result itself), got {show(step)}",
                "write a dotted path such as data.items",
            )
    return tuple(raw)


def _match(reader: Reader, path: KeyPath, raw: object) -> MatchSpec:
    spec = reader.mapping(path, raw, _MATCH)
    agent, operation, span = (
        reader.optional_string((*path, field), spec.get(field))
        for field in ("agent_name", "operation_name", "span_name")
    )
    attributes = spec.get("attributes", {})
    if not isinstance(attributes, Mapping):
        reader.fail(
            (*path, "attributes"),
            f"expected a mapping, got {show(attributes)}",
            "write `attributes: {attribute.name: value}`",
        )
    for key, value in attributes.items():
        if scalar_attributes({key: value}) is not None:
            reader.fail(
                (*path, "attributes", str(key)),
                f"expected a string, integer or boolean, got {show(value)}",
                "match on a single attribute value",
            )
    return MatchSpec(agent, operation, span, dict(attributes))


def _boundary(
    reader: Reader,
    name: str,
    raw: object,
    declared: list[str] | None,
    specs: Mapping[str, FactSpec] | None = None,
) -> BoundarySpec | None:
    """The boundary ``name``, or None after an error (kept in ``reader``) in one of its parts;
    ``declared``: the facts' names (None: unknown, a name was invalid), ``specs``: the facts
    read without error (a check's evidence is checked only when all its boundary's are)."""
    path: KeyPath = ("boundaries", name)
    spec = reader.mapping(path, raw, _BOUNDARY, required=("facts", "checks"))
    before = len(reader.errors)
    facts = reader.attempt(lambda: reader.string_list((*path, "facts"), spec["facts"])) or []
    for index, fact in enumerate(facts):
        problem = None if declared is None else fact_not_declared(fact, declared)
        if problem is not None:
            where = (*path, "facts", index)
            reader.errors.append(reader.error(where, problem.problem, problem.fix))
    checks = spec["checks"]
    if not isinstance(checks, list) or not checks:
        reader.fail(
            (*path, "checks"),
            f"expected a non-empty list of checks, got {show(checks)}",
            "write `checks: [{superlative: {winner_field: winner}}]`",
        )
    built = []
    for index, item in enumerate(checks):
        where = (*path, "checks", index)
        check = reader.attempt(partial(build_check, reader, where, item, facts))
        if check is None:
            continue
        built.append(check)
        if specs is not None and not all(fact in specs for fact in facts):
            continue  # a fact in error: its kind is not known
        ((family, arguments),) = item.items()  # evidence families: kinds and restriction, located
        evidence = partial(check_evidence, reader, where, family, arguments or {}, facts)
        reader.attempt(partial(evidence, specs or {}))
    mode = reader.attempt(
        lambda: (
            None
            if spec.get("mode") is None
            else reader.choice((*path, "mode"), spec["mode"], MODES)
        )
    )
    report = reader.attempt(
        lambda: reader.choice((*path, "report_mode"), spec.get("report_mode", "all"), _REPORT_MODES)
    )
    match = reader.attempt(lambda: _match(reader, (*path, "match"), spec.get("match", {})))
    answer = reader.attempt(
        lambda: reader.choice((*path, "answer"), spec.get("answer", "json"), ANSWERS)
    )
    if len(reader.errors) > before or match is None:
        return None
    try:
        return BoundarySpec(
            name,
            tuple(facts),
            tuple(built),
            match,
            cast("Mode | None", mode),
            cast(ReportMode, report),
            cast('Literal["json", "text"]', answer),
        )
    except ValueError as exc:  # a rule config.py adds later still fails here, located
        reader.fail(path, str(exc), "correct this boundary")
