"""The imperative ``check_*`` twin of a check builder, made from the builder itself.

``check_superlative = twin(superlative)``: ``check_superlative(registry, output, *args)`` runs
``superlative(*args)`` once against ``output``. The builder's signature is written once; the
twin's (for type checkers, ``inspect`` and the docs) is derived from it.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Concatenate, ParamSpec

from groundplane_otel.checks._base import Answer, NamedCheck
from groundplane_otel.registry import FactRegistry

__all__ = ["twin"]

_P = ParamSpec("_P")

_LEADING = (
    inspect.Parameter("registry", inspect.Parameter.POSITIONAL_ONLY, annotation="FactRegistry"),
    inspect.Parameter("output", inspect.Parameter.POSITIONAL_ONLY, annotation="Answer"),
)


def twin(
    builder: Callable[_P, NamedCheck],
) -> Callable[Concatenate[FactRegistry, Answer, _P], None]:
    """``check_<builder>(registry, output, /, *args, **kwargs)``: build the check with the builder's
    arguments (validated as the builder validates them), run it once, outside a boundary; it
    raises what the check raises (UnsupportedClaim or its subclass) on a mistake."""

    def run(registry: FactRegistry, output: Answer, /, *args: _P.args, **kwargs: _P.kwargs) -> None:
        builder(*args, **kwargs)(registry, output)

    name = f"check_{builder.__name__}"
    run.__name__ = run.__qualname__ = name
    run.__module__ = builder.__module__
    run.__doc__ = (
        f"Run :func:`{builder.__name__}` once, outside a boundary: ``{name}(registry, output, "
        f"...)`` is ``{builder.__name__}(...)(registry, output)``; raises what the check raises."
    )
    signature = inspect.signature(builder)
    run.__signature__ = signature.replace(  # type: ignore[attr-defined]
        parameters=[*_LEADING, *signature.parameters.values()], return_annotation="None"
    )
    return run
