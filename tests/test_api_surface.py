"""A groundplane user can switch imports: every name and keyword of the seed's API table exists."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

import pytest

import groundplane_otel as gp

BUILDERS: dict[str, tuple[str, ...]] = {
    "superlative": (
        "fact",
        "winner_field",
        "score_field",
        "rank_field",
        "tolerance",
        "rel_tolerance",
        "allow_tie_pick",
        "column",
        "higher_is_better",
        "on_missing",
    ),
    "field_matches_fact": ("field", "fact"),
    "ranking_prefix": (
        "fact",
        "field",
        "k",
        "ordered",
        "allow_tie_pick",
        "column",
        "higher_is_better",
        "on_missing",
    ),
    "aggregate_reconciles": (
        "fact",
        "field",
        "column",
        "op",
        "where",
        "weight_column",
        "tolerance",
        "rel_tolerance",
    ),
    "entities_recorded": ("fields", "fact", "path", "allow_empty", "case_sensitive"),
    "row_integrity": ("fact", "key_field", "fields", "tolerance", "rel_tolerance"),
    "comparison": (
        "fact",
        "a_field",
        "b_field",
        "delta_field",
        "column",
        "kind",
        "direction",
        "tolerance",
        "rel_tolerance",
    ),
}

METHODS: dict[str, tuple[str, ...]] = {
    "record": ("name", "value", "tool", "args"),
    "record_ranking": ("name", "scores", "key", "tool", "higher_is_better"),
    "record_table": ("name", "rows", "key", "tool", "columns", "exhaustive"),
    "record_domain": ("name", "members", "tool", "label"),
    "tool": ("name", "fact"),
}


def parameters(fn: Callable[..., Any]) -> list[str]:
    return list(inspect.signature(fn).parameters)


@pytest.mark.parametrize(("builder", "keywords"), sorted(BUILDERS.items()))
def test_builder_and_twin_take_the_seed_keywords(builder: str, keywords: tuple[str, ...]) -> None:
    """Each builder accepts the seed's keywords; its check_ twin takes (registry, output, same)."""
    build = getattr(gp, builder)
    twin = getattr(gp, f"check_{builder}")
    assert set(keywords) <= set(parameters(build))
    twin_params = parameters(twin)
    assert twin_params[:2] == ["registry", "output"]
    assert set(keywords) <= set(twin_params[2:])


@pytest.mark.parametrize(("method", "keywords"), sorted(METHODS.items()))
def test_registry_methods_take_the_seed_keywords(method: str, keywords: tuple[str, ...]) -> None:
    """FactRegistry's recorders keep the seed's parameter names."""
    assert set(keywords) <= set(parameters(getattr(gp.FactRegistry, method)))


def test_boundary_and_report_surface() -> None:
    """boundary(reg, facts=, checks=, require_output=, mode=) and Report's members exist."""
    assert parameters(gp.boundary)[:5] == ["registry", "facts", "checks", "require_output", "mode"]
    for member in ("violations", "passed", "failed", "ok", "to_dict", "to_text"):
        assert hasattr(gp.Report(), member)
    for member in ("submit", "report", "facts", "validate"):
        assert callable(getattr(gp.Boundary, member))


def test_error_hierarchy() -> None:
    """UnsupportedClaim, ClaimsUnsupported and UnregisteredFact are FactBoundaryErrors."""
    for error in (gp.UnsupportedClaim, gp.ClaimsUnsupported, gp.UnregisteredFact):
        assert issubclass(error, gp.FactBoundaryError)
    assert issubclass(gp.SparseColumnWarning, UserWarning)


def test_every_public_name_is_exported() -> None:
    """__all__ lists exactly what the module exposes, and each name resolves."""
    for name in gp.__all__:
        assert getattr(gp, name) is not None
