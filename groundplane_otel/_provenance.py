"""Provenance: where a fact came from (public as ``groundplane_otel.facts.Provenance``).

Its own module so the claim types (``errors``) can name it without importing the fact values.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from groundplane_otel._copy import copy_out
from groundplane_otel._frozen import draft_class

__all__ = ["Provenance", "new_provenance"]


@dataclass(frozen=True, slots=True)
class Provenance:
    """Where a fact came from: the tool, its arguments and, under OpenTelemetry, the tool span."""

    tool: str | None
    args: Mapping[str, Any] = field(default_factory=dict)
    trace_id: str | None = None
    span_id: str | None = None
    tool_call_id: str | None = None

    def __deepcopy__(self, memo: dict[int, Any]) -> Provenance:
        # The ids and the tool are strings; only the arguments need copying (the fast way).
        return Provenance(
            self.tool, copy_out(self.args), self.trace_id, self.span_id, self.tool_call_id
        )

    def __str__(self) -> str:
        args = self.args
        inner = ", ".join(f"{key}={args[key]!r}" for key in sorted(args)) if args else ""
        return f"{self.tool if self.tool is not None else '<unknown tool>'}({inner})"


Provenance.__module__ = "groundplane_otel.facts"  # its public home

_ProvenanceDraft = draft_class(Provenance)


def new_provenance(
    tool: str | None,
    args: Mapping[str, Any],
    trace_id: str | None,
    span_id: str | None,
    tool_call_id: str | None,
) -> Provenance:
    """``Provenance(tool, args, trace_id, span_id, tool_call_id)``, built cheaply (``_frozen``)."""
    draft = _ProvenanceDraft()
    draft.tool = tool
    draft.args = args
    draft.trace_id = trace_id
    draft.span_id = span_id
    draft.tool_call_id = tool_call_id
    draft.__class__ = Provenance  # ``finish`` inlined: one call less per captured tool call
    built: Provenance = draft
    return built
