"""What every framework adapter does the same way: find the guard and the boundary, hand the
run's final answer to ``Guard.check_output``, turn tool results into facts, build the report.

The framework modules (``openai_agents``, ``pydantic_ai``, ``langchain``) only translate their
framework's hook into these calls and the verdict into the framework's own mechanism
(a tripwire, ``ModelRetry``, a jump back to the model). Nothing here puts content on a span:
answers and tool results are handed over in process.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from groundplane_otel.adapters._otel import active_guard, current_span
from groundplane_otel.errors import ClaimsUnsupported, UnsupportedClaim

if TYPE_CHECKING:
    from opentelemetry.trace import Span

    from groundplane_otel.otel.install import Guard
    from groundplane_otel.otel.result import Evaluation

__all__ = ["GuardDecision", "answer_of", "check_answer", "find_guard", "record_hook_result"]

_CAP = 200


def _capped(value: object) -> str:
    text = repr(value)
    return text if len(text) <= _CAP else text[:_CAP] + "…"


def find_guard(guard: Guard | None, adapter: str) -> Guard:
    """The guard an adapter reports to: the one it was given, else the active one. No guard is
    a RuntimeError (an answer nobody can check must not pass silently)."""
    found = guard if guard is not None else active_guard()
    if found is None:
        raise RuntimeError(
            f"groundplane_otel.adapters.{adapter}: no guard is installed, so this answer cannot "
            "be checked; call groundplane_otel.otel.install(...) first (or set "
            "GROUNDPLANE_POLICY under opentelemetry-instrument), or pass guard="
        )
    return found


def boundary_name(guard: Guard, boundary: str | None, agent_name: str | None) -> str:
    """``boundary`` when given (it must exist), else the one boundary whose ``match.agent_name``
    is ``agent_name``: a boundary declared with just the agent name needs no adapter argument."""
    names = [spec.name for spec in guard.config.boundaries]
    if boundary is not None:
        if boundary not in names:
            raise ValueError(f"unknown boundary {_capped(boundary)}; the guard declares {names}")
        return boundary
    found = [
        spec.name
        for spec in guard.config.boundaries
        if agent_name is not None and spec.match.agent_name == agent_name
    ]
    if len(found) == 1:
        return found[0]
    if not found:
        raise ValueError(
            f"no boundary matches agent {_capped(agent_name)} (match.agent_name); "
            f"pass boundary= (one of {names})"
        )
    raise ValueError(
        f"agent {_capped(agent_name)} matches several boundaries {found}; pass boundary="
    )


def answer_of(output: Any) -> Mapping[str, Any] | str:
    """The answer as ``check_output`` reads it: a mapping, a pydantic model or dataclass
    (dumped to a dict), or text (the JSON object inside is read). Anything else becomes its
    text, which fails closed as unreadable: an answer is never waved through."""
    if isinstance(output, Mapping):
        return output
    if isinstance(output, str):
        return output
    dump = getattr(output, "model_dump", None)
    if callable(dump):
        dumped = dump(mode="json")
        if isinstance(dumped, Mapping):
            return dumped
    if dataclasses.is_dataclass(output) and not isinstance(output, type):
        return dataclasses.asdict(output)
    return str(output)


@dataclass(frozen=True, slots=True)
class GuardDecision:
    """The guard's decision on one answer, in the terms a framework hook needs."""

    evaluation: Evaluation

    @property
    def error(self) -> BaseException | None:
        """What enforce mode raises (None: the answer passes, or observe mode)."""
        return self.evaluation.error

    @property
    def violations(self) -> int:
        return self.evaluation.violations

    def report(self) -> dict[str, Any]:
        """A JSON-safe summary for the application (a tripwire's ``output_info``, a log):
        ``{"boundary", "outcome", "violations": [claim dicts], "errors": [reason codes]}``."""
        claims = [
            finding.claim.to_dict()
            for finding in self.evaluation.findings
            if finding.result == "unsupported"
        ]
        findings = self.evaluation.findings
        errors = [finding.reason for finding in findings if finding.result != "unsupported"]
        return {
            "boundary": self.evaluation.boundary,
            "outcome": self.evaluation.outcome,
            "violations": claims,
            "errors": errors,
        }

    def text(self) -> str:
        """The violations for a reask, one line each, values included (each claim's full
        ``diagnosis``: the model needs them even when content capture is off, and this text goes
        only to the model, never to telemetry)."""
        error = self.error
        if isinstance(error, ClaimsUnsupported):
            return error.report.to_text()
        findings = self.evaluation.findings
        claims = [f.claim for f in findings if f.result == "unsupported"] or [
            f.claim for f in findings
        ]
        return "\n".join(_full(claim) for claim in claims)


def _full(claim: UnsupportedClaim) -> str:
    diagnosis = getattr(claim, "diagnosis", None)
    return diagnosis if isinstance(diagnosis, str) else str(claim)


def check_answer(guard: Guard, output: Any, *, boundary: str, span: Span | None) -> GuardDecision:
    """Check the run's final answer against this request's facts (``Guard.check_output``:
    telemetry on ``span``, counted once, the run marked as checked)."""
    where = span if span is not None else current_span()
    if where is not None:
        guard.mark_handled(where)  # the framework's own mechanism delivers this verdict
    return GuardDecision(guard.check_output(answer_of(output), boundary=boundary, span=where))


def _plain(value: Any) -> Any:
    """A tool result or arguments as plain data: JSON text parsed, pydantic models dumped."""
    if isinstance(value, (str, bytes)):
        try:
            return json.loads(value)
        except ValueError:
            return value
    dump = getattr(value, "model_dump", None)
    if callable(dump):
        return dump(mode="json")
    return value


def record_hook_result(
    guard: Guard,
    *,
    tool: str,
    arguments: Any,
    result: Any,
    tool_call_id: str | None,
    source: str,
    span: Span | None = None,
) -> None:
    """Record a tool result handed over by a framework hook (``Guard.record_fact``), with the
    tool span (``span``, default the current span) and the model's tool call id as provenance,
    typed by the guard's FactSpecs for ``tool`` (a tool no FactSpec names is not a fact
    source: nothing is recorded). Nothing is written on the span."""
    if not any(spec.tool == tool for spec in guard.config.facts):
        return
    where = span if span is not None else current_span()
    args = _plain(arguments) if arguments is not None else {}
    guard.record_fact(
        where,
        tool=tool,
        fact=None,
        value=_plain(result),
        arguments=args if isinstance(args, Mapping) else {"input": args},
        source=source,
        tool_call_id=tool_call_id,
    )
