"""Load-time rules of the evidence families in a policy, where every fact is declared: what a
check reads must be there, of the right kind, restricted or not as the family needs — so a
boundary that could only ever fail closed is a located PolicyError at startup, not a
``check_error`` on every request.

- ``no_restricted_values``: each fact in ``facts`` is declared ``restricted: true``; without
  ``facts``, at least one of the boundary's facts is.
- ``citations_retrieved`` / ``quotes_anchored``: each fact in ``documents`` is
  ``kind: documents`` and not restricted; without ``documents``, at least one of the
  boundary's facts is.
- ``entities_in_scope``: ``approved`` facts and the ``vocabulary`` hold names (ranking, table
  or domain), and approved facts are not restricted.
- ``numbers_recorded``: each fact in ``documents`` (retrievals whose text is evidence) is
  ``kind: documents`` and not restricted.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

from groundplane_otel.otel.config import FactSpec
from groundplane_otel.otel.policy._reader import KeyPath, Reader

__all__ = ["check_evidence"]

_NAMES: Final = ("ranking", "table", "domain")


def check_evidence(
    reader: Reader,
    path: KeyPath,
    family: str,
    arguments: Mapping[str, Any],
    facts: Sequence[str],
    specs: Mapping[str, FactSpec],
) -> None:
    """Fail (located at the check or its argument) when the rules above do not hold."""
    here: KeyPath = (*path, family)
    in_boundary = [specs[name] for name in facts if name in specs]
    if family == "no_restricted_values":
        listed = arguments.get("facts")
        if isinstance(listed, list):
            for index, name in enumerate(listed):
                spec = specs.get(name) if isinstance(name, str) else None
                if spec is not None and not spec.restricted:
                    reader.fail(
                        (*here, "facts", index),
                        f"fact {name!r} is not restricted",
                        f"declare `restricted: true` on fact {name!r}",
                    )
        elif not any(spec.restricted for spec in in_boundary):
            reader.fail(
                here,
                "none of this boundary's facts is restricted, so the check could never run",
                "declare `restricted: true` on the fact that must not leak",
            )
    elif family == "numbers_recorded":
        _documents(reader, here, arguments.get("documents"), specs, "read")
    elif family in ("citations_retrieved", "quotes_anchored"):
        listed = arguments.get("documents")
        if isinstance(listed, list):
            _documents(reader, here, listed, specs, "cite")
        elif not any(s.kind == "documents" and not s.restricted for s in in_boundary):
            reader.fail(
                here,
                "none of this boundary's facts is an unrestricted `kind: documents` fact",
                "declare the retrieval as a fact with `kind: documents` and list it here",
            )
    elif family == "entities_in_scope":
        _names(reader, here, arguments, specs)


def _documents(
    reader: Reader, here: KeyPath, listed: Any, specs: Mapping[str, FactSpec], verb: str
) -> None:
    """Each fact a ``documents`` list names is an unrestricted ``kind: documents`` fact."""
    if not isinstance(listed, list):
        return
    for index, name in enumerate(listed):
        spec = specs.get(name) if isinstance(name, str) else None
        if spec is not None and (spec.kind != "documents" or spec.restricted):
            reader.fail(
                (*here, "documents", index),
                f"fact {name!r} is not an unrestricted documents fact",
                f"{verb} a fact declared `kind: documents` (fact {name!r} is "
                f"{'restricted' if spec.restricted else spec.kind})",
            )


def _names(
    reader: Reader, here: KeyPath, arguments: Mapping[str, Any], specs: Mapping[str, FactSpec]
) -> None:
    approved = arguments.get("approved")
    named: list[tuple[KeyPath, Any, bool]] = []
    if isinstance(approved, list):
        named += [((*here, "approved", i), name, True) for i, name in enumerate(approved)]
    if isinstance(arguments.get("vocabulary"), str):
        named.append(((*here, "vocabulary"), arguments["vocabulary"], False))
    for where, name, must_be_open in named:
        spec = specs.get(name) if isinstance(name, str) else None
        if spec is None:
            continue
        if spec.kind not in _NAMES:
            reader.fail(
                where,
                f"fact {name!r} is a {spec.kind} fact and holds no names",
                "name a fact of kind ranking, table or domain",
            )
        if must_be_open and spec.restricted:
            reader.fail(
                where,
                f"fact {name!r} is restricted and cannot be approved",
                "approve unrestricted facts only (restricted names are refused by this check)",
            )
