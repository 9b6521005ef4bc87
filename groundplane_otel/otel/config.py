"""The guard's declarations: which tool feeds which fact, which spans a boundary guards.

Built in code or loaded from a policy file (``policy.py``); validated when constructed, so a
misconfiguration fails at startup, never at request time.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from groundplane_otel._echo import echo
from groundplane_otel._runner import ReportMode
from groundplane_otel.checks._base import NamedCheck
from groundplane_otel.otel._rules import (
    fact_not_declared,
    match_names,
    name_sequence,
    not_a_check,
    scalar_attributes,
)

__all__ = ["BoundarySpec", "FactKind", "FactSpec", "GuardConfig", "Limits", "MatchSpec", "Mode"]

FactKind = Literal["ranking", "table", "domain", "value", "documents"]
Mode = Literal["enforce", "observe"]
FACT_KINDS: tuple[FactKind, ...] = ("ranking", "table", "domain", "value", "documents")
MODES: tuple[Mode, ...] = ("enforce", "observe")
# Where the guardrail/evaluation events go: span events (and log records too, given a logger
# provider), or log records only (span events are being deprecated for log-based events).
EventSink = Literal["span", "log"]
EVENT_SINKS: tuple[EventSink, ...] = ("span", "log")
ANSWERS: tuple[str, ...] = ("json", "text")  # what a boundary's checks read
REPORT_MODES: tuple[ReportMode, ...] = ("all", "first")


@dataclass(frozen=True, slots=True)
class FactSpec:
    """A tool whose result becomes the fact ``name``.

    ``path`` (dotted) locates the payload inside the tool result (e.g. ``"rows"``); a tuple of
    paths reads the first the result has (``""`` is the result itself), for a tool whose result
    changed shape (``("items", "")``: the rows under ``items``, else the result).
    ranking: rows of objects ranked by ``score`` keyed by ``key``, or a ``{name: score}`` object.
    table: rows keyed by ``key``; ``exhaustive=False`` marks a truncated result.
    domain: a list of names, or rows whose ``key`` column is the name.
    value: the payload as is. ``arguments``: only calls whose arguments include these.
    documents: what a retrieval returned (``tool`` is the data source id, or the retrieval
    span's name): a list of ``{id, score?, content?}`` objects.
    ``restricted=True``: evidence no output may reveal (``no_restricted_values``; never in
    telemetry).
    """

    name: str
    tool: str
    kind: FactKind = "value"
    key: str | None = None
    score: str | None = None
    higher_is_better: bool = True
    exhaustive: bool = True
    path: str | tuple[str, ...] | None = None
    label: str | None = None
    arguments: Mapping[str, Any] = field(default_factory=dict)
    restricted: bool = False

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name:
            raise ValueError(f"fact name must be a non-empty string, got {self.name!r}")
        if not isinstance(self.restricted, bool):
            raise ValueError(
                f"fact {self.name!r}: restricted must be True or False, got {self.restricted!r}"
            )
        if self.kind == "documents" and (self.key or self.score):
            raise ValueError(
                f"fact {self.name!r}: a documents fact takes no key= or score= (documents carry "
                "their own id and score)"
            )
        if not isinstance(self.tool, str) or not self.tool:
            raise ValueError(f"fact {self.name!r}: tool must be a non-empty string")
        if isinstance(self.path, tuple) and (
            not self.path or not all(isinstance(step, str) for step in self.path)
        ):
            raise ValueError(
                f"fact {self.name!r}: path must be a string or a non-empty tuple of strings, "
                f"got {self.path!r}"
            )
        if self.kind not in FACT_KINDS:
            raise ValueError(
                f"fact {self.name!r}: kind must be one of {FACT_KINDS}, got {self.kind!r}"
            )
        if self.kind == "table" and not self.key:
            raise ValueError(f"fact {self.name!r}: a table needs key= (the key column)")
        if self.kind == "ranking" and bool(self.key) != bool(self.score):
            raise ValueError(
                f"fact {self.name!r}: a ranking from rows needs both key= and score= "
                "(or neither, for a {name: score} object)"
            )


@dataclass(frozen=True, slots=True)
class MatchSpec:
    """Which spans a boundary guards. Every given criterion must hold (on the span or an ancestor
    for ``agent_name``); a span whose ``groundplane.boundary`` attribute names the boundary always
    matches."""

    agent_name: str | None = None
    operation_name: str | None = None
    span_name: str | None = None
    attributes: Mapping[str, str | int | bool] = field(default_factory=dict)

    def __post_init__(self) -> None:
        names = {
            "agent_name": self.agent_name,
            "operation_name": self.operation_name,
            "span_name": self.span_name,
        }
        problem = match_names(names) or scalar_attributes(self.attributes)
        if problem is not None:
            raise TypeError(problem.text("MatchSpec"))

    def is_empty(self) -> bool:
        return not (self.agent_name or self.operation_name or self.span_name or self.attributes)


@dataclass(frozen=True, slots=True)
class BoundarySpec:
    """A named boundary: the facts its output may use, the checks it must pass, the spans it
    guards, and its mode (None: the guard's default).

    ``answer``: what its checks read — ``json`` (the JSON object in the answer; default) or
    ``text`` (the whole answer text, for the prose families: numbers_recorded,
    no_restricted_values, entities_in_scope, citations_retrieved, quotes_anchored)."""

    name: str
    facts: tuple[str, ...]
    checks: tuple[NamedCheck, ...]
    match: MatchSpec = field(default_factory=MatchSpec)
    mode: Mode | None = None
    report_mode: ReportMode = "all"
    answer: Literal["json", "text"] = "json"

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name:
            raise ValueError(f"boundary name must be a non-empty string, got {self.name!r}")
        owner = f"boundary {self.name!r}"
        problem = name_sequence("facts", self.facts)
        if problem is not None:
            raise TypeError(problem.text(owner))
        if isinstance(self.checks, str) or not isinstance(self.checks, (list, tuple)):
            raise TypeError(
                f"{owner}: checks must be a sequence of checks, got {echo(self.checks)}. "
                "Fix: write checks=(superlative(...),) (a one-element tuple needs the comma)"
            )
        for check in self.checks:
            problem = not_a_check(check)
            if problem is not None:
                raise TypeError(problem.text(owner))
        object.__setattr__(self, "facts", tuple(self.facts))  # a list works as in YAML
        object.__setattr__(self, "checks", tuple(self.checks))
        if not isinstance(self.match, MatchSpec):
            raise TypeError(
                f"{owner}: match must be a MatchSpec, got {type(self.match).__name__}. "
                "Fix: write match=MatchSpec(agent_name=...)"
            )
        if self.mode is not None and self.mode not in MODES:
            raise ValueError(
                f"boundary {self.name!r}: mode must be one of {MODES}, got {self.mode!r}"
            )
        if self.report_mode not in REPORT_MODES:
            raise ValueError(
                f"{owner}: report_mode must be one of {REPORT_MODES}, got {echo(self.report_mode)}"
            )
        if not self.checks:
            raise ValueError(f"boundary {self.name!r} declares no checks")
        if self.answer not in ANSWERS:
            raise ValueError(
                f"boundary {self.name!r}: answer must be one of {ANSWERS}, got {self.answer!r}"
            )
        if self.answer == "text":
            fielded = [c.name for c in self.checks if c.family != "custom" and not c.text]
            if fielded:
                raise ValueError(
                    f"boundary {self.name!r} reads the whole answer text (answer: text), but "
                    f"{', '.join(fielded)} read JSON fields: give each its whole-answer form "
                    "(e.g. field=None, text_fields=['*']) or declare answer: json"
                )
        for check in self.checks:
            missing = [fact for fact in check.facts if fact not in self.facts]
            if missing:
                raise ValueError(
                    f"boundary {self.name!r}: check {check.name} reads {missing}, "
                    f"which the boundary does not declare in facts={list(self.facts)}"
                )


@dataclass(frozen=True, slots=True)
class Limits:
    """Bounds on the per-trace registries; every drop is counted.

    ``max_payload_bytes`` bounds the JSON text of one tool result; ``max_trace_bytes`` the memory
    the facts of one trace retain, ``max_total_bytes`` that of all of them (least recently used
    traces are evicted first): parsed objects, indices and what checks cache on them, estimated
    within 2x of tracemalloc (rows retain 4-8x their JSON text, ``[{},{},...]`` 24x);
    ``max_depth`` bounds JSON nesting; ``max_spans_per_trace`` the enclosing agent/LLM spans a
    span remembers (its lineage, to match boundaries through ancestors and check each answer
    once).
    """

    max_traces: int = 10_000
    ttl_seconds: float = 600.0
    max_facts_per_trace: int = 64
    max_payload_bytes: int = 8 * 1024 * 1024
    max_trace_bytes: int = 32 * 1024 * 1024
    max_total_bytes: int = 256 * 1024 * 1024
    max_depth: int = 64
    max_spans_per_trace: int = 4096

    def __post_init__(self) -> None:
        for name in (
            "max_traces",
            "max_facts_per_trace",
            "max_payload_bytes",
            "max_trace_bytes",
            "max_total_bytes",
            "max_depth",
            "max_spans_per_trace",
        ):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"limits.{name} must be an int >= 1, got {value!r}")
        if (
            isinstance(self.ttl_seconds, bool)
            or not isinstance(self.ttl_seconds, (int, float))
            or not self.ttl_seconds > 0
        ):
            raise ValueError(f"limits.ttl_seconds must be a number > 0, got {self.ttl_seconds!r}")


@dataclass(frozen=True, slots=True)
class GuardConfig:
    """Everything the guard needs: fact sources, boundaries, mode, content capture, limits."""

    facts: tuple[FactSpec, ...] = ()
    boundaries: tuple[BoundarySpec, ...] = ()
    mode: Mode = "enforce"
    capture_content: bool = False
    limits: Limits = field(default_factory=Limits)
    # ``gen_ai.guardrail.policy.version`` on every guardrail event (a policy file's ``version``
    # plus a hash of its text: which policy text produced a finding); None: not written.
    policy_version: str | None = None
    # "log": the guardrail/evaluation events are log records only (install needs a
    # logger_provider); "span": span events (also log records, given a logger_provider).
    events: EventSink = "span"
    # Also one ``gen_ai.evaluation.result`` event per evaluated check (the merged convention).
    evaluation_events: bool = True
    # Coverage (``_engine/coverage.py``): a boundary that matched no span in this many requests
    # that recorded its facts gets a WARNING naming what was seen (and counts in
    # ``groundplane.coverage`` either way).
    coverage_after: int = 20
    # Strict: an invalid policy is fatal at start-up (zero-code: the process exits), and a
    # boundary unmatched after ``coverage_after`` requests is *tripped*: an answer in a request
    # that recorded its facts and matched no boundary is counted ``error``
    # (``boundary_unmatched``) and refused in enforce mode.
    strict: bool = False

    def __post_init__(self) -> None:
        if self.events not in EVENT_SINKS:
            raise ValueError(f"events must be one of {EVENT_SINKS}, got {echo(self.events)}")
        if self.mode not in MODES:
            raise ValueError(f"mode must be one of {MODES}, got {self.mode!r}")
        after = self.coverage_after
        if isinstance(after, bool) or not isinstance(after, int) or after < 1:
            raise ValueError(f"coverage_after must be an int >= 1, got {echo(after)}")
        if not isinstance(self.strict, bool):
            raise ValueError(f"strict must be True or False, got {echo(self.strict)}")
        for what, items, kind in (
            ("facts", self.facts, FactSpec),
            ("boundaries", self.boundaries, BoundarySpec),
        ):
            if not isinstance(items, (list, tuple)):
                raise TypeError(
                    f"GuardConfig: {what} must be a tuple of {kind.__name__}, got "
                    f"{echo(items)}. Fix: write {what}=({kind.__name__}(...),)"
                )
            for item in items:
                if not isinstance(item, kind):
                    raise TypeError(
                        f"GuardConfig: {what} must hold {kind.__name__} values, got "
                        f"{type(item).__name__}"
                    )
        object.__setattr__(self, "facts", tuple(self.facts))
        object.__setattr__(self, "boundaries", tuple(self.boundaries))
        names = [spec.name for spec in self.boundaries]
        duplicates = sorted({name for name in names if names.count(name) > 1})
        if duplicates:
            raise ValueError(f"boundary names must be unique; repeated: {duplicates}")
        declared = [spec.name for spec in self.facts]
        for spec in self.boundaries:
            for fact in spec.facts:
                problem = fact_not_declared(fact, declared)
                if problem is not None:
                    raise ValueError(problem.text(f"boundary {spec.name!r}"))
