"""entities_recorded: every name the model uses must be one the tools actually returned.

Names come from a Domain, a Ranking's names or a Table's key column, and compare type-strictly
(101 is not "101"). It catches a name blended out of two real ones ("north harbour"), an id
leaked from an earlier tool call, case drift, and an empty list smuggling in a "none qualified"
claim.

Evaluation order: the fact must hold names → ``path`` must lead somewhere in the output → for
each object holding the fields (the output, what ``path`` reaches, or each element of the list
it reaches) and each field in order: the field must be present → an empty list fails unless
``allow_empty`` → every member, in order, must be recorded.
"""

from __future__ import annotations

from collections.abc import Collection, Hashable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, cast

from groundplane_otel.checks._base import (
    Answer,
    NamedCheck,
    ValuePath,
    as_path,
    describe,
    field_value,
    path_text,
    require_json,
    walk_steps,
)
from groundplane_otel.checks._memo import derived
from groundplane_otel.checks._names import (
    NameIndex,
    Names,
    is_recorded,
    kind_of,
    name_index,
    names_fact,
)
from groundplane_otel.checks._ranked import require_bool, require_name
from groundplane_otel.checks._twin import twin
from groundplane_otel.errors import MISSING, UnsupportedClaim
from groundplane_otel.facts import Domain, Fact, Ranking, Table
from groundplane_otel.registry import FactRegistry

__all__ = ["check_entities_recorded", "entities_recorded"]

_BUILDER = "entities_recorded"


@dataclass(frozen=True, slots=True)
class _EntitiesRecorded:
    """The validated configuration of one entities_recorded check; calling it runs the check."""

    fields: tuple[str, ...]
    fact: str
    path: ValuePath = ()
    allow_empty: bool = False
    case_sensitive: bool = True

    def __post_init__(self) -> None:
        require_name(_BUILDER, "fact", self.fact)
        object.__setattr__(self, "path", as_path(_BUILDER, self.path, what="names or list indices"))
        if not self.fields:
            raise ValueError(f"{_BUILDER}: fields must name at least one output field, got []")
        for name in self.fields:
            require_name(_BUILDER, "every entry of fields", name)
        if len(set(self.fields)) != len(self.fields):
            raise ValueError(f"{_BUILDER}: fields must not repeat a field, got {list(self.fields)}")
        require_bool(_BUILDER, "allow_empty", self.allow_empty)
        require_bool(_BUILDER, "case_sensitive", self.case_sensitive)

    def __call__(self, registry: FactRegistry, output: Answer) -> None:
        output = require_json(_BUILDER, output)
        stored = names_fact(registry, self.fact)
        if not self.path and self._all_recorded(stored.value, output):
            return
        _Run(self, registry, stored).check(output)

    def _all_recorded(self, value: Names, output: Mapping[str, Any]) -> bool:
        """The common case in one pass: every field present, every name a recorded string.

        False whenever anything needs a closer look (a missing field, an empty list, a name
        that is not a plain recorded str); the full run then decides, and explains.
        """
        if isinstance(value, Domain):
            known: Collection[Any] = value.members
        elif isinstance(value, Ranking) and value._inverse is not None:
            return False  # a Ranking derived from a table indexes rows, not positions
        else:
            known = value._index
        for name in self.fields:
            if name not in output:
                return False
            held = output[name]
            if type(held) is list:
                if not held and not self.allow_empty:
                    return False
                for member in held:
                    if type(member) is not str or member not in known:
                        return False
            elif type(held) is not str or held not in known:
                return False
        return True


class _Run:
    """One evaluation against one output: the stored fact and, once a miss needs it, its index."""

    __slots__ = ("_index", "registry", "spec", "stored")

    def __init__(self, spec: _EntitiesRecorded, registry: FactRegistry, stored: Fact) -> None:
        self.spec = spec
        self.registry = registry
        self.stored = stored
        self._index: NameIndex | None = None

    def check(self, output: Mapping[str, Any]) -> None:
        path = path_text(self.spec.path)
        for at, holder in self._holders(output):
            for name in self.spec.fields:
                if at is None:
                    self._check_value(name, name, field_value(output, name))
                    continue
                label = f"{path}.{name}"
                if not isinstance(holder, Mapping):
                    what = f"{at!r} is {kind_of(holder)}, not an object holding"
                    raise _structure(label, holder, "an object", f"{what} field {name!r}")
                if name not in holder:
                    reason = f"the output declared no field {name!r} at {at!r}"
                    raise _structure(label, MISSING, "a value", reason)
                self._check_value(label, f"{at}.{name}", holder[name])

    def _holders(self, output: Mapping[str, Any]) -> Iterator[tuple[str | None, Any]]:
        """(location, object) pairs holding the fields: the output, or what ``path`` reaches.

        A path ending on a list fans out: the fields are read from every element, so
        ``path="summary.entities", fields=["name"]`` checks each entity's name.
        """
        steps = self.spec.path
        if not steps:
            yield None, output
            return
        path = path_text(steps)
        found, target, depth = walk_steps(output, steps)
        if not found:
            reason = f"the output declared nothing at path {path!r}{_stopped(output, steps, depth)}"
            raise _structure(path_text(steps[: depth + 1]), MISSING, "a value", reason)
        if not isinstance(target, list):
            yield path, target
            return
        if not target and not self.spec.allow_empty:
            raise self._empty(path)
        for position, element in enumerate(target):
            yield f"{path}.{position}", element

    def _check_value(self, label: str, location: str, value: Any) -> None:
        """A name, or a list of names checked member by member (a tuple too, unless the
        recorded names are themselves tuples: then a tuple is one composite name)."""
        if not isinstance(value, list) and not (
            isinstance(value, tuple) and not self._tuple_names()
        ):
            self._check_name(label, location, value)
            return
        if not value and not self.spec.allow_empty:
            raise self._empty(label)
        for position, member in enumerate(value):
            self._check_name(label, f"{location}.{position}", member)

    def _check_name(self, label: str, location: str, claimed: Any) -> None:
        if self._recorded(claimed):
            return
        index = self._names()
        where = "" if location == label else f" at {location!r}"
        ignoring = "" if self.spec.case_sensitive else ", ignoring case"
        reason = f"{claimed!r}{where} is not among the {index.count} recorded names{ignoring}"
        hint = index.hint(claimed, case_sensitive=self.spec.case_sensitive, case_option=True)
        if hint:
            reason += f"; {hint}"
        raise self._fail(label, claimed, index.listing(), reason, "unknown_entity")

    def _recorded(self, claimed: Any) -> bool:
        if is_recorded(self.stored.value, claimed):
            return True
        if self.spec.case_sensitive or not isinstance(claimed, str):
            return False  # casefolding applies to strings only: 101 never matches "101"
        return bool(self._names().folded_match(claimed))

    def _tuple_names(self) -> bool:
        value = self.stored.value
        if isinstance(value, Domain):
            return False
        return derived(value, "entities.tuple_names", lambda: _has_tuple(value))

    def _names(self) -> NameIndex:
        if self._index is None:
            self._index = name_index(self.registry, self.spec.fact, self.stored)
        return self._index

    def _empty(self, label: str) -> UnsupportedClaim:
        index = self._names()
        reason = (
            f"an empty list claims none qualified, but {index.count} names are recorded; "
            "pass allow_empty=True if an empty answer is valid here"
        )
        return self._fail(label, [], index.listing(), reason, "empty_list")

    def _fail(
        self, label: str, claimed: Any, supported: Any, reason: str, code: str
    ) -> UnsupportedClaim:
        return UnsupportedClaim(
            label,
            claimed,
            supported,
            fact=self.spec.fact,
            provenance=self.stored.provenance,
            reason=reason,
            code=code,
        )


def _structure(label: str, claimed: Any, supported: str, reason: str) -> UnsupportedClaim:
    """The output lacks the shape the check reads (like a missing field: no fact involved)."""
    return UnsupportedClaim(label, claimed, supported, reason=reason, code="field_missing")


def _has_tuple(value: Ranking | Table) -> bool:
    names = value.names if isinstance(value, Ranking) else value.keys
    return any(isinstance(name, tuple) for name in names)


def _stopped(output: Mapping[str, Any], steps: ValuePath, depth: int) -> str:
    """`` (no 'entities' under 'summary', a dict)``: where a path into the output ran out."""
    part = steps[depth]
    if depth == 0:
        return f" (no field {part!r})"
    _, parent, _ = walk_steps(output, steps[:depth])
    return f" (no {part!r} under {path_text(steps[:depth])!r}, {kind_of(parent)})"


def _as_fields(fields: object) -> tuple[str, ...]:
    """``fields`` as a tuple; a bare string is refused (it would be checked letter by letter)."""
    if isinstance(fields, (str, bytes)):
        raise TypeError(
            f"{_BUILDER}: fields must be a list of output field names, not a single string "
            f"(did you mean fields=[{fields!r}]?)"
        )
    if not isinstance(fields, Sequence):
        raise TypeError(f"{_BUILDER}: fields must be a list of output field names, got {fields!r}")
    return tuple(fields)


def entities_recorded(
    fields: Sequence[str],
    fact: str,
    *,
    path: str | Sequence[Hashable] | None = (),
    allow_empty: bool = False,
    case_sensitive: bool = True,
) -> NamedCheck:
    """Every name in the output ``fields`` must be recorded in ``fact``.

    ``fact`` is a Domain, a Ranking (its names) or a Table (its key column). A field holds one
    name or a list (or tuple) of names, checked member by member; when the recorded names are
    themselves tuples (composite Table keys), a tuple is one name. Names compare type-strictly;
    ``case_sensitive=False`` casefolds strings only. An empty list fails unless
    ``allow_empty``: it claims that none qualified.

    ``path`` (a dotted string or a sequence of keys; ``()`` is the root; list indices allowed)
    walks into the *output*, from its root to the object holding ``fields`` (a step the output
    lacks fails as a missing field named by the steps so far); when it ends on a list, the
    fields are read from every element: ``path="summary.entities", fields=["name"]`` checks
    each entity's name. A miss names the
    closest recorded name ("did you mean 'harbour'?"). Arguments are validated here.
    """
    spec = _EntitiesRecorded(
        _as_fields(fields),
        fact,
        path=cast(ValuePath, path),
        allow_empty=allow_empty,
        case_sensitive=case_sensitive,
    )
    return NamedCheck(
        describe(_BUILDER, fact=fact, fields=list(spec.fields)),
        spec,
        family=_BUILDER,
        facts=(fact,),
    )


check_entities_recorded = twin(entities_recorded)
