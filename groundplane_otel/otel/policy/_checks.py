"""Building a boundary's checks from a policy: ``- superlative: {winner_field: winner}``.

The family name selects a builder from a fixed table (never an import path from the file), the
arguments are checked against the builder's signature (unknown keys get a "did you mean"), and
the builder's own ValueError/TypeError is re-raised as a PolicyError at the argument's key path.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable, Mapping
from typing import Any, Final

import groundplane_otel
from groundplane_otel import _FAMILIES
from groundplane_otel._echo import capped, echo
from groundplane_otel.checks._base import NamedCheck
from groundplane_otel.otel.policy._reader import KeyPath, Reader, show, suggest

__all__ = ["FAMILIES", "build_check"]

FAMILIES: Final = tuple(family.name for family in _FAMILIES)
"""The check families a policy may name: the package's registry of families, each its builder's
name in the ``groundplane_otel`` namespace."""

_MANY_FACTS: Final = frozenset({"numbers_recorded", "dates_recorded"})
"""Families whose ``fact`` may be a list (the facts a text may draw on)."""

_PREFIX = re.compile(r"^\w+(\([^)]*\))?:\s*")
_FACT_LISTS: Final = ("facts", "documents", "approved")
"""Arguments naming boundary facts (a list); ``vocabulary`` names one."""


def _builder(family: str) -> Callable[..., NamedCheck]:
    builder: Callable[..., NamedCheck] = getattr(groundplane_otel, family)
    return builder


def _blamed(message: str, arguments: Mapping[str, Any]) -> str | None:
    """The argument a builder's error message is about: the first one it names."""
    text = _PREFIX.sub("", message)
    found: list[tuple[int, str]] = []
    for name in arguments:
        match = re.search(rf"(?<![\w.]){re.escape(name)}(?!\w)", text)
        if match:
            found.append((match.start(), name))
    return min(found)[1] if found else None


def _fact_argument(
    reader: Reader, path: KeyPath, family: str, arguments: dict[str, Any], facts: list[str]
) -> None:
    """Default ``fact`` to the boundary's only fact (every fact, for a family reading several);
    refuse a fact the boundary does not list."""
    if "fact" not in arguments and family in _MANY_FACTS:
        arguments["fact"] = list(facts)
        return
    if "fact" not in arguments:
        if len(facts) != 1:
            reader.fail(
                path,
                f"no `fact` given and the boundary lists {len(facts)} facts ({', '.join(facts)})",
                f"add `fact: <one of {', '.join(facts)}>` to this {family} check",
            )
        arguments["fact"] = facts[0]
        return
    value = arguments["fact"]
    if isinstance(value, list) and family in _MANY_FACTS:  # a family reading several facts
        for position, item in enumerate(value):
            _listed(
                reader,
                (*path, "fact", position),
                reader.string((*path, "fact", position), item),
                facts,
            )
        return
    _listed(reader, (*path, "fact"), reader.string((*path, "fact"), value), facts)


def _listed(reader: Reader, path: KeyPath, fact: str, facts: list[str]) -> None:
    """Refuse a fact the boundary does not list."""
    if fact not in facts:
        close = suggest(fact, facts)
        fix = (
            f"did you mean {close!r}?"
            if close
            else f"add {echo(fact)} to this boundary's facts, or read one of: {', '.join(facts)}"
        )
        reader.fail(
            path,
            f"the check reads fact {echo(fact)}, which this boundary does not list in its facts",
            fix,
        )


def _named_facts(
    reader: Reader, path: KeyPath, arguments: Mapping[str, Any], facts: list[str]
) -> None:
    """Facts a check names in a list argument (``documents: [kb]``) or ``vocabulary`` must be
    among the boundary's facts: located at the entry, with a "did you mean"."""
    named: list[tuple[KeyPath, object]] = []
    for argument in _FACT_LISTS:
        value = arguments.get(argument)
        if isinstance(value, list):
            named += [((*path, argument, index), item) for index, item in enumerate(value)]
    if isinstance(arguments.get("vocabulary"), str):
        named.append(((*path, "vocabulary"), arguments["vocabulary"]))
    for where, fact in named:
        if isinstance(fact, str) and fact not in facts:
            close = suggest(fact, facts)
            fix = f"did you mean {close!r}?" if close else f"add {fact!r} to this boundary's facts"
            reader.fail(where, f"fact {fact!r} is not among this boundary's facts", fix)


def build_check(reader: Reader, path: KeyPath, item: object, facts: list[str]) -> NamedCheck:
    """One entry of ``checks:``: a one-key mapping ``{family: {argument: value, ...}}``."""
    families = list(FAMILIES)
    if not isinstance(item, Mapping) or len(item) != 1:
        reader.fail(
            path,
            f"expected a mapping with exactly one key (the check family), got {show(item)}"
            + (f" with {len(item)} keys" if isinstance(item, Mapping) else ""),
            "write each check as its own list item, e.g. `- superlative: {winner_field: winner}`",
        )
    ((family, raw),) = item.items()
    if family not in FAMILIES:
        close = suggest(family, families)
        fix = f"did you mean {close!r}?" if close else f"use one of: {', '.join(families)}"
        reader.fail((*path, str(family)), f"unknown check family {echo(family)}", fix)
    path = (*path, family)
    if raw is None:
        raw = {}
    if not isinstance(raw, Mapping):
        reader.fail(
            path,
            f"expected a mapping of arguments, got {show(raw)}",
            f"write `{family}: {{argument: value, ...}}`",
        )
    builder = _builder(family)
    parameters = inspect.signature(builder).parameters
    allowed = [name for name, p in parameters.items() if p.kind is not p.VAR_KEYWORD]
    reader.mapping(path, raw, allowed)
    arguments = dict(raw)
    if "fact" in parameters:
        _fact_argument(reader, path, family, arguments, facts)
    for name, parameter in parameters.items():
        if parameter.default is parameter.empty and name not in arguments:
            reader.fail(path, f"missing required argument {name!r}", f"add `{name}: ...`")
    _named_facts(reader, path, arguments, facts)
    try:
        return builder(**arguments)
    except (TypeError, ValueError) as exc:
        blamed = _blamed(str(exc), arguments)
        target = f"`{blamed}`" if blamed else "the arguments"
        reader.fail(
            path if blamed is None else (*path, blamed),
            capped(_PREFIX.sub("", str(exc))),  # the builder's message echoes the value
            f"give {target} a value {family}() accepts",
        )
