"""FactRegistry: write-once, deep-copying storage of facts with provenance."""

from __future__ import annotations

import copy
import functools
import inspect
from collections.abc import Callable, Iterator, Mapping, Sequence
from itertools import chain
from typing import Any, TypeVar, cast

from groundplane_otel._copy import copy_in, copy_rows
from groundplane_otel.documents import Document, Documents, documents_from
from groundplane_otel.errors import FactBoundaryError, UnregisteredFact
from groundplane_otel.facts import Domain, Fact, Provenance, Ranking, Table, ranking_from_scores

__all__ = ["FactRegistry"]

F = TypeVar("F", bound=Callable[..., Any])
V = TypeVar("V")


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
        return copy.deepcopy(self._store(name, copied, provenance))

    def _store(self, name: str, value: Any, provenance: Provenance) -> Fact:
        """Store an already-copied value. Write-once."""
        self._check_writable(name)
        if not isinstance(name, str) or not name:
            raise TypeError(f"fact name must be a non-empty string, got {name!r}")
        if name in self._facts:
            first = self._facts[name].provenance
            raise ValueError(f"fact {name!r} is write-once and was already recorded from {first}")
        fact = Fact(name, value, provenance)
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
    ) -> Ranking:
        """Compute the best-first ordering of ``scores`` in code and register it."""
        self._check_writable(name)
        ranking = ranking_from_scores(key, copy_in(scores, fact=name), higher_is_better, fact=name)
        self._restrict_new(name, restricted)
        self._store(name, ranking, self._provenance(name, tool, args))
        return copy.deepcopy(ranking)

    def record_table(
        self,
        name: str,
        rows: Sequence[Mapping[str, Any]],
        key: str,
        tool: str | None = None,
        args: Mapping[str, Any] | None = None,
        columns: Sequence[str] | None = None,
        exhaustive: bool = True,
        *,
        restricted: bool = False,
    ) -> Table:
        """Register retrieved rows keyed by ``key``; ``exhaustive=False`` marks truncation."""
        self._check_writable(name)
        if isinstance(rows, (str, bytes)) or not isinstance(rows, Sequence):
            raise TypeError(f"fact {name!r}: rows must be a sequence of mappings")
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
        self._store(name, table, self._provenance(name, tool, args))
        return table._copy()

    def record_domain(
        self,
        name: str,
        members: Sequence[str] | frozenset[str] | set[str],
        tool: str | None = None,
        args: Mapping[str, Any] | None = None,
        label: str | None = None,
        *,
        restricted: bool = False,
    ) -> Domain:
        """Register a closed set of names (strings)."""
        self._check_writable(name)
        if isinstance(members, str):
            raise TypeError(f"fact {name!r}: members must be a collection of strings, not a str")
        try:
            domain = Domain(frozenset(members), label)
        except (ValueError, TypeError) as exc:
            raise type(exc)(f"fact {name!r}: {exc}") from None
        self._restrict_new(name, restricted)
        self._store(name, domain, self._provenance(name, tool, args))
        return copy.deepcopy(domain)

    def record_documents(
        self,
        name: str,
        documents: Sequence[Document | Mapping[str, Any]],
        tool: str | None = None,
        args: Mapping[str, Any] | None = None,
        *,
        source: str | None = None,
        restricted: bool = False,
    ) -> Documents:
        """Register what a retrieval returned: ``{id, score?, content?}`` objects (or
        ``Document`` values), in retrieval order. ``source``: the data source id."""
        self._check_writable(name)
        value = documents_from(copy_in(list(documents), fact=name), fact=name, source=source)
        self._restrict_new(name, restricted)
        self._store(name, value, self._provenance(name, tool, args))
        return value

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
        return copy.deepcopy(self.peek(name))

    def value(self, name: str) -> Any:
        """A deep copy of the value recorded under ``name``."""
        return copy.deepcopy(self.peek(name).value)

    def provenance(self, name: str) -> Provenance:
        return copy.deepcopy(self.peek(name).provenance)

    def ranking(self, name: str) -> Ranking:
        return copy.deepcopy(self._typed(name, Ranking, "record_ranking()"))

    def table(self, name: str) -> Table:
        return copy.deepcopy(self._typed(name, Table, "record_table()"))

    def domain(self, name: str) -> Domain:
        return copy.deepcopy(self._typed(name, Domain, "record_domain()"))

    def documents(self, name: str) -> Documents:
        return copy.deepcopy(self._typed(name, Documents, "record_documents()"))

    def names(self) -> list[str]:
        """Registered fact names, in recording order."""
        return list(self._facts)

    def __contains__(self, name: object) -> bool:
        return name in self._facts

    def __len__(self) -> int:
        return len(self._facts)

    def __iter__(self) -> Iterator[str]:
        return iter(list(self._facts))

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

    def _typed(self, name: str, kind: type[V], recorder: str) -> V:
        value = self.peek(name).value
        if not isinstance(value, kind):
            raise TypeError(
                f"fact {name!r} is a {type(value).__name__}, not a {kind.__name__}; "
                f"record it with {recorder}"
            )
        return value

    def view(self, names: Sequence[str]) -> FactRegistry:
        """A read-only registry sharing only the named facts (which must exist)."""
        view = FactRegistry()
        view._facts = {name: self.peek(name) for name in names}
        view._restricted = {name for name in view._facts if name in self._restricted}
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
