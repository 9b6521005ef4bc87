"""aggregate_reconciles' arguments: their types, their validation and the ``where=`` filter's
normalisation into a private, memo-keyable form.

Every argument is checked when the check is built, so a misconfigured check fails at once, not
when it first runs.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Hashable, Mapping
from typing import Any, Literal, Union, get_args

from groundplane_otel._arithmetic import validate_tolerances
from groundplane_otel._keys import strict_key
from groundplane_otel.checks._numbers.sums import require_name

__all__ = ["BUILDER", "OPS", "Filter", "Op", "RowPredicate", "RowFilter", "validate"]

Op = Literal["sum", "count", "mean", "min", "max", "median"]
OPS: tuple[str, ...] = get_args(Op)
RowPredicate = Callable[[Mapping[str, Any]], bool]
RowFilter = Union[Mapping[str, Any], RowPredicate]  # noqa: UP007 - evaluated at runtime on 3.10
# A validated filter: a mapping's private (column, value) pairs, a callable, or none at all.
Filter = Union[tuple[tuple[str, Any], ...], RowPredicate, None]  # noqa: UP007 - as above

BUILDER = "aggregate_reconciles"


def validate(
    *,
    fact: str,
    field: str,
    column: str | None,
    op: Op,
    where: RowFilter | None,
    weight_column: str | None,
    tolerance: int | float,
    rel_tolerance: int | float | None,
) -> tuple[Filter, Hashable | None]:
    """Check every argument; return the validated filter and its memo key (see ``_token``)."""
    require_name(BUILDER, "fact", fact)
    require_name(BUILDER, "field", field)
    require_name(BUILDER, "column", column, optional=True)
    require_name(BUILDER, "weight_column", weight_column, optional=True)
    if op not in OPS:
        raise ValueError(f"{BUILDER}: op must be one of {list(OPS)}, got {op!r}")
    if column is None and op != "count":
        raise ValueError(f"{BUILDER}: op={op!r} needs column= (only 'count' works without one)")
    if weight_column is not None and op != "mean":
        raise ValueError(f"{BUILDER}: weight_column= applies to op='mean' only, got op={op!r}")
    validate_tolerances(tolerance, rel_tolerance, where=BUILDER)
    pairs = _validated_where(where)
    return pairs, _token(pairs)


def _validated_where(where: RowFilter | None) -> Filter:
    """A mapping becomes a private copy of its (column, value) pairs (``{}``: no filter, like
    None); a callable is kept."""
    if where is None:
        return None
    if isinstance(where, Mapping):
        if not where:
            return None  # no condition: every row, as where=None
        for column in where:
            if not isinstance(column, str) or not column:
                raise TypeError(
                    f"{BUILDER}: where keys must be non-empty column names, got {column!r}"
                )
        return tuple((column, copy.deepcopy(value)) for column, value in where.items())
    if callable(where):
        return where
    raise TypeError(
        f"{BUILDER}: where must be None, a mapping column -> value, or a callable "
        f"predicate(row) -> bool, got {where!r}"
    )


def _token(where: Filter) -> Hashable | None:
    """A type-strict memo key for a mapping filter (None for a callable or unhashable one)."""
    if not isinstance(where, tuple):
        return None
    token = ("where", tuple((column, strict_key(value)) for column, value in sorted(where)))
    try:
        hash(token)
    except TypeError:
        return None
    return token
