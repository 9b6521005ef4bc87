"""FactRegistry: write-once, deep-copying storage of facts with provenance."""

from __future__ import annotations

import copy
import functools
import inspect
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from itertools import chain
from typing import Any, TypeVar, cast

from groundplane_otel._copy import copy_in, copy_rows
from groundplane_otel._frozen import draft_class
from groundplane_otel.documents import Document, Documents, documents_from
from groundplane_otel.errors import FactBoundaryError, SparseColumnWarning, UnregisteredFact
from groundplane_otel.facts import (
    DEFAULT_LABEL,
    Domain,
    Fact,
    Provenance,
    Ranking,
    Table,
    ranking_from_scores,
)

__all__ = ["FactRegistry", "SparseColumnWarning"]

_RECORDERS: dict[type, str] = {
    Ranking: "record_ranking()",
    Table: "record_table()",
    Domain: "record_domain()",
    Documents: "record_documents()",
}

_FactDraft = draft_class(Fact)

F = TypeVar("F", bound=Callable[..., Any])


def _a(noun: str) -> str:
    """``a Table``, ``an int``."""
    return f"{'an' if noun[:1].lower() in 'aeiou' else 'a'} {noun}"


def _copied(fact: Fact) -> Fact:
    """A deep copy of a stored fact (each value kind copies itself the fast way)."""
    return Fact(fact.name, copy.deepcopy(fact.value), copy.deepcopy(fact.provenance))


class FactRegistry:
    """Holds recorded facts. Values are deep-copied in and out; a name is written once."""

    def __init__(self) -> None:
        self._facts: dict[str, Fact] = {}
        self._read_only = False
        self._restricted: set[str] = set()  # names whose values must never reach an output

    # -- recording ---------------------------------------------------------------------------

    def record(
        self,
        name: str,
        value: Any,
        tool: str | None = None,
        args: Mapping[str, Any] | None = None,
        *,
        provenance: Provenance | None = None,
        restricted: bool = False,
    ) -> Fact:
        """Register ``value`` under ``name`` with its provenance. Write-once.

        ``restricted=True``: the fact is evidence no output may reveal (``no_restricted_values``
        fails on any of its values; telemetry never carries them)."""
        if isinstance(value, Fact):
            raise TypeError("record() takes a value, not a Fact")
        self._restrict_new(name, restricted)
        if provenance is None:
            provenance = Provenance(tool, copy_in(dict(args or {}), fact=name, where="args"))
        else:
            provenance = copy.deepcopy(provenance)
        copied = copy_in(value, fact=name)
        if isinstance(copied, Table):
            copy_in(copied.rows, fact=name, where="rows")  # scan cells: refuse NaN/inf
        return _copied(self._store(name, copied, provenance))

    def _store(self, name: str, value: Any, provenance: Provenance) -> Fact:
        """Store an already-copied value. Write-once."""
        if self._read_only:  # (tested here: no call in the usual case)
            self._check_writable(name)
        if not isinstance(name, str) or not name:
            raise TypeError(f"fact name must be a non-empty string, got {name!r}")
        if name in self._facts:
            first = self._facts[name].provenance
            raise ValueError(f"fact {name!r} is write-once and was already recorded from {first}")
        draft = _FactDraft()  # Fact(name, value, provenance), built cheaply (``_frozen``)
        draft.name = name
        draft.value = value
        draft.provenance = provenance
        draft.__class__ = Fact  # ``finish`` inlined: one call less per stored fact
        fact: Fact = draft
        self._facts[name] = fact
        return fact

    def record_ranking(
        self,
        name: str,
        scores: Mapping[Any, Any] | Sequence[tuple[Any, Any]],
        key: str = "score",
        tool: str | None = None,
        args: Mapping[str, Any] | None = None,
        higher_is_better: bool = True,
        *,
        restricted: bool = False,
    ) -> Fact:
        """Compute the best-first ordering of ``scores`` in code and register it.

        Returns the recorded Fact (a copy); its ``value`` is the Ranking.
        """
        self._check_writable(name)
        ranking = ranking_from_scores(key, copy_in(scores, fact=name), higher_is_better, fact=name)
        self._restrict_new(name, restricted)
        stored = self._store(name, ranking, self._provenance(name, tool, args))
        return _copied(stored)

    def record_table(
        self,
        name: str,
        rows: Iterable[Mapping[str, Any]],
        key: str,
        tool: str | None = None,
        args: Mapping[str, Any] | None = None,
        columns: Sequence[str] | None = None,
        exhaustive: bool = True,
        *,
        restricted: bool = False,
    ) -> Fact:
        """Register retrieved rows keyed by ``key``; ``exhaustive=False`` marks truncation.

        ``rows`` is any iterable of mappings (a list, a generator, DB-API dict rows).
        Returns the recorded Fact (a copy); its ``value`` is the Table.
        """
        self._check_writable(name)
        if isinstance(rows, (str, bytes, Mapping)) or not isinstance(rows, Iterable):
            raise TypeError(
                f"fact {name!r}: rows must be an iterable of mappings, got {type(rows).__name__}"
            )
        if not isinstance(rows, Sequence):
            rows = list(rows)
        copied, flat, shared = copy_rows(rows, fact=name)
        if columns is None:
            columns = (
                shared if shared is not None else list(dict.fromkeys(chain.from_iterable(copied)))
            )
        try:
            table = Table._recorded(key, tuple(copied), tuple(columns), exhaustive, flat)
        except (ValueError, TypeError) as exc:
            raise type(exc)(f"fact {name!r}: {exc}") from None
        self._restrict_new(name, restricted)
        stored = self._store(name, table, self._provenance(name, tool, args))
        return _copied(stored)

    def record_domain(
        self,
        name: str,
        members: Sequence[str] | frozenset[str] | set[str],
        tool: str | None = None,
        args: Mapping[str, Any] | None = None,
        label: str | None = DEFAULT_LABEL,
        *,
        restricted: bool = False,
    ) -> Fact:
        """Register a closed set of names (strings); ``label`` says what they name.

        Returns the recorded Fact (a copy); its ``value`` is the Domain.
        """
        self._check_writable(name)
        if isinstance(members, str):
            raise TypeError(f"fact {name!r}: members must be a collection of strings, not a str")
        try:
            domain = Domain(frozenset(members), label)
        except (ValueError, TypeError) as exc:
            raise type(exc)(f"fact {name!r}: {exc}") from None
        self._restrict_new(name, restricted)
        stored = self._store(name, domain, self._provenance(name, tool, args))
        return _copied(stored)

    def record_documents(
        self,
        name: str,
        documents: Sequence[Document | Mapping[str, Any]],
        tool: str | None = None,
        args: Mapping[str, Any] | None = None,
        *,
        source: str | None = None,
        restricted: bool = False,
    ) -> Fact:
        """Register what a retrieval returned: ``{id, score?, content?}`` objects (or
        ``Document`` values), in retrieval order. ``source``: the data source id.

        Returns the recorded Fact (a copy); its ``value`` is the Documents.
        """
        self._check_writable(name)
        value = documents_from(copy_in(list(documents), fact=name), fact=name, source=source)
        self._restrict_new(name, restricted)
        stored = self._store(name, value, self._provenance(name, tool, args))
        return _copied(stored)

    # -- restricted facts ----------------------------------------------------------------------

    def restrict(self, name: str) -> None:
        """Declare ``name`` restricted (before or after it is recorded; never undone)."""
        self._check_writable(name)
        if not isinstance(name, str) or not name:
            raise TypeError(f"fact name must be a non-empty string, got {name!r}")
        self._restricted.add(name)

    def is_restricted(self, name: str) -> bool:
        """Was ``name`` declared restricted?"""
        return name in self._restricted

    def restricted_names(self) -> list[str]:
        """The recorded facts declared restricted, in recording order."""
        if not self._restricted:  # the usual case: no pass over the facts
            return []
        return [name for name in self._facts if name in self._restricted]

    def _restrict_new(self, name: str, restricted: bool) -> None:
        """``restricted=``: checked, and applied before the fact becomes readable (a fact is
        never visible unrestricted, even for a moment); a name already recorded is left to
        the write-once error."""
        if not isinstance(restricted, bool):
            raise TypeError(f"fact {name!r}: restricted must be True or False, got {restricted!r}")
        if restricted and name not in self._facts:
            self.restrict(name)

    def tool(self, name: str, fact: str | None = None) -> Callable[[F], F]:
        """Decorator: record the function's return value under ``fact`` (default: ``name``).

        Provenance args are the call bound to the signature with defaults applied, copied
        before the call runs. Works on sync and async functions.
        """
        fact_name = fact or name

        def decorate(fn: F) -> F:
            signature = inspect.signature(fn)

            def bound_args(args: tuple[Any, ...], kwargs: dict[str, Any]) -> dict[str, Any]:
                bound = signature.bind(*args, **kwargs)
                bound.apply_defaults()
                return copy.deepcopy(dict(bound.arguments))

            if inspect.iscoroutinefunction(fn) or inspect.iscoroutinefunction(
                getattr(fn, "__call__", None)  # noqa: B004 - async callable objects
            ):

                @functools.wraps(fn)
                async def async_wrapper(*args: Any, **kwargs: Any) -> Any:
                    call_args = bound_args(args, kwargs)
                    result = await fn(*args, **kwargs)
                    self.record(fact_name, result, name, call_args)
                    return result

                return cast(F, async_wrapper)

            @functools.wraps(fn)
            def wrapper(*args: Any, **kwargs: Any) -> Any:
                call_args = bound_args(args, kwargs)
                result = fn(*args, **kwargs)
                self.record(fact_name, result, name, call_args)
                return result

            return cast(F, wrapper)

        return decorate

    # -- reading -----------------------------------------------------------------------------

    def get(self, name: str) -> Fact:
        """A deep copy of the fact recorded under ``name``."""
        return _copied(self.peek(name))

    def value(self, name: str) -> Any:
        """A deep copy of the value recorded under ``name``."""
        return copy.deepcopy(self.peek(name).value)

    def provenance(self, name: str) -> Provenance:
        return copy.deepcopy(self.peek(name).provenance)

    def as_type(self, name: str, *types: type) -> Any:
        """A copy of the value of ``name`` when it is an instance of one of ``types``.

        Otherwise a TypeError naming the fact, its type, the wanted types and the recorder to
        use for each; an unknown name is ``UnregisteredFact``.
        """
        if not types:
            raise TypeError("as_type() needs at least one type")
        value = self.peek(name).value
        if isinstance(value, types):
            return copy.deepcopy(value)
        wanted = " or ".join(_a(kind.__name__) for kind in types)
        if len(types) == 1:
            how = f"record it with {_RECORDERS.get(types[0], 'record()')}"
        else:
            how = "record " + ", or ".join(
                f"{_a(kind.__name__)} with {_RECORDERS.get(kind, 'record()')}" for kind in types
            )
        raise TypeError(f"fact {name!r} is {_a(type(value).__name__)}, not {wanted}; {how}")

    def ranking(self, name: str) -> Ranking:
        ranking: Ranking = self.as_type(name, Ranking)
        return ranking

    def table(self, name: str) -> Table:
        table: Table = self.as_type(name, Table)
        return table

    def domain(self, name: str) -> Domain:
        domain: Domain = self.as_type(name, Domain)
        return domain

    def documents(self, name: str) -> Documents:
        documents: Documents = self.as_type(name, Documents)
        return documents

    def names(self) -> list[str]:
        """Registered fact names, in recording order."""
        return list(self._facts)

    def __contains__(self, name: object) -> bool:
        return name in self._facts

    def __len__(self) -> int:
        return len(self._facts)

    def __iter__(self) -> Iterator[Fact]:
        """Copies of the recorded Facts (name, value, provenance), in recording order."""
        return (_copied(fact) for fact in list(self._facts.values()))

    def __repr__(self) -> str:
        mode = ", read-only" if self._read_only else ""
        return f"FactRegistry({self.names()}{mode})"

    # -- internal: zero-copy access for checks, views for boundaries --------------------------

    def peek(self, name: str) -> Fact:
        """The stored fact itself, without copying. Checks read through this; never mutate it."""
        try:
            return self._facts[name]
        except KeyError:
            raise UnregisteredFact(name, self._facts) from None

    def view(self, names: Sequence[str]) -> FactRegistry:
        """A read-only registry sharing only the named facts (which must exist)."""
        return self.view_of({name: self.peek(name) for name in names})

    def view_of(self, facts: dict[str, Fact]) -> FactRegistry:
        """A read-only registry of ``facts``, some of this registry's (its ``view``)."""
        view = FactRegistry.__new__(FactRegistry)  # (its three fields set here: no __init__)
        view._facts = facts
        restricted = self._restricted
        view._restricted = {name for name in facts if name in restricted} if restricted else set()
        view._read_only = True
        return view

    @property
    def read_only(self) -> bool:
        return self._read_only

    @staticmethod
    def _provenance(name: str, tool: str | None, args: Mapping[str, Any] | None) -> Provenance:
        return Provenance(tool, copy_in(dict(args or {}), fact=name, where="args"))

    def _check_writable(self, name: str) -> None:
        if self._read_only:
            raise FactBoundaryError(
                f"cannot record fact {name!r}: this registry is a read-only boundary view"
            )
