"""Turning a fact into what a check needs (a Ranking, a Table, a set of names)."""

from __future__ import annotations

from typing import Any

from groundplane_otel.facts import Domain, Fact, OnMissing, Ranking, Table
from groundplane_otel.registry import FactRegistry

__all__ = ["resolve_ranking", "resolve_table", "validate_ranking_args"]


def validate_ranking_args(
    builder: str, column: object, higher_is_better: object, on_missing: object
) -> None:
    """Build-time validation of the arguments every ranking-reading check takes."""
    if column is not None and (not isinstance(column, str) or not column):
        raise TypeError(f"{builder}: column must be a non-empty string or None, got {column!r}")
    if higher_is_better is not None and not isinstance(higher_is_better, bool):
        raise TypeError(
            f"{builder}: higher_is_better must be True, False or None, got {higher_is_better!r}"
        )
    if on_missing not in ("raise", "skip"):
        raise ValueError(f'{builder}: on_missing must be "raise" or "skip", got {on_missing!r}')


def resolve_ranking(
    registry: FactRegistry,
    fact: str,
    column: str | None,
    higher_is_better: bool | None,
    on_missing: OnMissing,
) -> tuple[Ranking, Fact]:
    """The Ranking a check reads: the fact itself, or a Table column ranked (cached)."""
    stored = registry.peek(fact)
    value: Any = stored.value
    if isinstance(value, Ranking):
        if column is not None:
            raise ValueError(
                f"fact {fact!r} is a Ranking on {value.key!r}; column= applies to Tables only"
            )
        if on_missing != "raise":
            raise ValueError(
                f"fact {fact!r} is a Ranking on {value.key!r}; on_missing={on_missing!r} "
                "applies to Tables only (a Ranking has no missing cells)"
            )
        if higher_is_better is not None and higher_is_better != value.higher_is_better:
            raise ValueError(
                f"fact {fact!r} was ranked with higher_is_better={value.higher_is_better}; "
                f"the check asks for higher_is_better={higher_is_better}"
            )
        return value, stored
    if isinstance(value, Table):
        if column is None:
            raise ValueError(f"fact {fact!r} is a Table: pass column= to rank it")
        direction = True if higher_is_better is None else higher_is_better
        return value.ranking(column, direction, on_missing, fact=fact), stored
    raise TypeError(
        f"fact {fact!r} is a {type(value).__name__}; this check needs a Ranking "
        "(record_ranking()) or a Table (record_table()) with column="
    )


def resolve_table(registry: FactRegistry, fact: str) -> tuple[Table, Fact]:
    """The Table a check reads; any other kind is a TypeError naming the recorder."""
    stored = registry.peek(fact)
    if not isinstance(stored.value, Table):
        raise TypeError(
            f"fact {fact!r} is a {type(stored.value).__name__}; this check needs a Table "
            "(record_table())"
        )
    return stored.value, stored


def domain_names(registry: FactRegistry, fact: str) -> tuple[tuple[Any, ...], Fact]:
    """Names a membership check accepts: a Domain's members, a Ranking's names, a Table's keys."""
    stored = registry.peek(fact)
    value = stored.value
    if isinstance(value, Domain):
        return value.names, stored
    if isinstance(value, Ranking):
        return value.names, stored
    if isinstance(value, Table):
        return value.keys, stored
    raise TypeError(
        f"fact {fact!r} is a {type(value).__name__}; entity checks need a Domain "
        "(record_domain()), a Ranking or a Table"
    )
