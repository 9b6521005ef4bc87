"""Restricted values never reach telemetry, whatever ``capture_content`` says.

A finding is *withheld* when it is about a restricted fact (the ``no_restricted_values``
family, or a ``restricted_*`` / ``citation_restricted`` code) or when anything it would show —
its message, claimed or supported value, the exception that caused it — reveals a value of a
restricted fact the evaluation could read (the matcher of ``no_restricted_values``: case-folded
and whitespace-normalised text, numbers by value). A withheld finding's claim is marked with
its content-free summary (``redaction.mark``: ``str``/``repr``/``args`` become the summary, a
crashing check's own exception is unchained) even with content capture on, so:

- every span the exception crosses records the summary, not the message, as
  ``exception.message``/``exception.stacktrace`` (and any log line that formats it);
- ``Telemetry.event_attributes`` leaves out ``groundplane.claimed``/``supported``/``message``
  for a marked claim (``is_withheld``);
- ``Telemetry.annotate`` overwrites the model output an instrumentation captured on the
  guarded span (``gen_ai.output.messages``, OpenInference ``output.value`` and
  ``llm.output_messages.*``, Traceloop ``gen_ai.completion.*``) with ``OUTPUT_WITHHELD``:
  that output is the leak (``scrub_output``).

The application still gets the exception itself (the full text in ``diagnosis``);
``no_restricted_values`` findings never carry the value in the first place.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from groundplane_otel.checks._restricted_values import RestrictedIndex, restricted_indexes
from groundplane_otel.errors import ClaimsUnsupported, FactBoundaryError
from groundplane_otel.otel import semconv as sc
from groundplane_otel.otel._engine import redaction
from groundplane_otel.otel.result import Finding
from groundplane_otel.registry import FactRegistry

__all__ = [
    "OUTPUT_WITHHELD",
    "is_withheld",
    "reveals_restricted",
    "scrub_output",
    "withhold_restricted",
]

OUTPUT_WITHHELD = "<withheld by groundplane: the output reveals a restricted value>"
_RESTRICTED_ATTR = "groundplane_restricted"

RESTRICTED_FAMILIES = frozenset({"no_restricted_values"})
RESTRICTED_CODES = frozenset({"restricted_value", "restricted_entity", "citation_restricted"})


def _text(value: Any) -> str:
    try:
        return json.dumps(value, default=repr, allow_nan=False)
    except (TypeError, ValueError):
        return repr(value)


def _shows_value(finding: Finding, indexes: Sequence[RestrictedIndex]) -> bool:
    """Does anything ``finding`` would show reveal a value ``indexes`` match?"""
    claim = finding.claim
    texts = [claim.diagnosis, _text(claim.claimed), _text(claim.supported)]
    cause = getattr(claim, "check_error", None) or claim.__cause__
    if cause is not None:
        texts.append(str(cause))
    return any(index.in_text(text) is not None for text in texts for index in indexes)


def withhold_restricted(
    boundary: str,
    findings: Sequence[Finding],
    error: BaseException | None,
    registry: FactRegistry,
) -> None:
    """Mark every withheld finding's claim (and a ``ClaimsUnsupported`` that carries one) with
    its content-free summary."""
    if not findings:
        return
    # Once per evaluation, not per finding; none to build (no call) when nothing is restricted.
    indexes = restricted_indexes(registry) if registry.restricted_names() else ()
    withheld = []  # a loop, not a comprehension: no function built for a finding or two
    for finding in findings:
        if (
            finding.family in RESTRICTED_FAMILIES
            or finding.reason in RESTRICTED_CODES
            or (indexes and _shows_value(finding, indexes))
        ):
            withheld.append(finding)
    for finding in withheld:
        line = redaction.claim_summary(
            finding.claim.field, boundary, finding.family, finding.reason, result=finding.result
        )
        redaction.mark(finding.claim, line)  # also unchains a crashing check's exception
        setattr(finding.claim, _RESTRICTED_ATTR, True)
    if withheld and isinstance(error, ClaimsUnsupported) and not is_withheld(error):
        lines = [
            redaction.claim_summary(claim.field, boundary, None, claim.code, result="unsupported")
            for claim in error.report.violations
        ]
        redaction.mark(error, redaction.summary(lines))


def reveals_restricted(findings: Sequence[Finding]) -> bool:
    """Did ``withhold_restricted`` find a restricted value in any of these findings?"""
    return any(getattr(finding.claim, _RESTRICTED_ATTR, False) is True for finding in findings)


def scrub_output(span: Any) -> None:
    """Overwrite the model output the span carries (see the module docstring); public API."""
    attributes = getattr(span, "attributes", None) or {}
    keys = [
        key
        for key in attributes
        if key in (sc.GEN_AI_OUTPUT_MESSAGES, sc.OI_OUTPUT_VALUE)
        or (key.startswith(sc.OI_OUTPUT_MESSAGES_PREFIX) and key.endswith(".content"))
        or (key.startswith(sc.GEN_AI_COMPLETION_PREFIX) and key.endswith(".content"))
    ]
    for key in keys:
        span.set_attribute(key, OUTPUT_WITHHELD)


def is_withheld(error: BaseException) -> bool:
    """Was this claim marked content-free (content capture off, or a restricted value)?"""
    return isinstance(error, FactBoundaryError) and error.redacted
