"""boundary(): declare which facts an output may use and which checks it must pass."""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Mapping, Sequence
from contextvars import ContextVar
from types import TracebackType
from typing import Any, Literal, TypeVar, cast

from groundplane_otel.checks._base import check_name
from groundplane_otel.errors import ClaimsUnsupported, FactBoundaryError, UnsupportedClaim
from groundplane_otel.registry import FactRegistry
from groundplane_otel.report import Report

__all__ = ["Boundary", "BoundaryDeclaration", "boundary", "run_checks"]

Mode = Literal["first", "all"]
CheckFn = Callable[[FactRegistry, Mapping[str, Any]], None]
F = TypeVar("F", bound=Callable[..., Any])
_MODES = ("first", "all")


def _validate_mode(mode: object) -> Mode:
    if mode not in _MODES:
        raise ValueError(f'mode must be "first" or "all", got {mode!r}')
    return cast(Mode, mode)


def run_checks(
    registry: FactRegistry, output: Mapping[str, Any], checks: Sequence[CheckFn], mode: Mode
) -> Report:
    """Run ``checks`` in order. "first" raises the first UnsupportedClaim; "all" collects them.

    Any other exception (a misconfigured check, a bad recorded cell) propagates: it is a
    developer mistake, not a model mistake.
    """
    violations: list[UnsupportedClaim] = []
    passed: list[str] = []
    failed: list[str] = []
    for check in checks:
        try:
            check(registry, output)
        except UnsupportedClaim as claim:
            if mode == "first":
                raise
            violations.append(claim)
            failed.append(check_name(check))
        else:
            passed.append(check_name(check))
    return Report(tuple(violations), tuple(passed), tuple(failed))


def _require_mapping(output: object) -> Mapping[str, Any]:
    if isinstance(output, (str, bytes)):
        raise TypeError(
            "submit() takes the model's structured output (a mapping of fields); free prose "
            "is out of scope — have the model emit fields and check those"
        )
    if not isinstance(output, Mapping):
        raise TypeError(f"output must be a mapping of fields, got {type(output).__name__}")
    return output


class Boundary:
    """One entry of a boundary: a read-only view of the declared facts and the checks to run."""

    def __init__(
        self, registry: FactRegistry, checks: Sequence[CheckFn], mode: Mode, name: str | None
    ) -> None:
        self._registry = registry
        self._checks = tuple(checks)
        self._mode = mode
        self.name = name
        self.submitted = False
        self.output: Mapping[str, Any] | None = None
        self.last_report: Report | None = None

    @property
    def checks(self) -> tuple[CheckFn, ...]:
        return self._checks

    def facts(self) -> FactRegistry:
        """The read-only registry holding only the declared facts."""
        return self._registry

    def submit(self, output: Mapping[str, Any], mode: Mode | None = None) -> Mapping[str, Any]:
        """Check ``output``; return it unchanged when every claim is supported.

        "first" raises the first UnsupportedClaim; "all" raises ClaimsUnsupported with all.
        """
        run_mode = self._mode if mode is None else _validate_mode(mode)
        self.output = _require_mapping(output)
        self.submitted = True
        report = run_checks(self._registry, output, self._checks, run_mode)
        self.last_report = report
        if not report.ok:
            raise ClaimsUnsupported(report)
        return output

    def report(self, output: Mapping[str, Any]) -> Report:
        """Run every check and return the Report; never raises for a model mistake."""
        self.output = _require_mapping(output)
        self.submitted = True
        self.last_report = run_checks(self._registry, output, self._checks, "all")
        return self.last_report

    def validate(self, mode: Mode | None = None) -> Mapping[str, Any]:
        """Re-run the checks on the stored output (as ``submit`` does)."""
        if self.output is None:
            raise FactBoundaryError("validate() needs an output: call submit() or report() first")
        return self.submit(self.output, mode)


class BoundaryDeclaration:
    """What ``boundary(...)`` returns: reusable, re-entrant; a context manager and a decorator."""

    def __init__(
        self,
        registry: FactRegistry,
        facts: Sequence[str],
        checks: Sequence[CheckFn],
        require_output: bool,
        mode: Mode,
        name: str | None,
    ) -> None:
        if not isinstance(registry, FactRegistry):
            raise TypeError(f"registry must be a FactRegistry, got {type(registry).__name__}")
        if isinstance(facts, str) or not all(isinstance(fact, str) for fact in facts):
            raise TypeError(f"facts must be a list of fact names, got {facts!r}")
        for check in checks:
            if not callable(check):
                raise TypeError(f"every check must be callable, got {check!r}")
        self.registry = registry
        self.facts = tuple(facts)
        self.checks = tuple(checks)
        self.require_output = require_output
        self.mode = _validate_mode(mode)
        self.name = name
        self._active: ContextVar[tuple[Boundary, ...]] = ContextVar("groundplane_boundary")

    def __enter__(self) -> Boundary:
        view = self.registry.view(self.facts)
        entered = Boundary(view, self.checks, self.mode, self.name)
        self._active.set((*self._active.get(()), entered))
        return entered

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        stack = self._active.get(())
        entered, self_stack = stack[-1], stack[:-1]
        self._active.set(self_stack)
        if exc_type is None and self.require_output and not entered.submitted:
            raise FactBoundaryError(
                f"boundary over {list(self.facts)} exited without submit() or report(): "
                "an output that was never checked is an error (pass require_output=False "
                "if this block may legitimately produce nothing)"
            )

    def __call__(self, fn: F) -> F:
        """Decorate a function (sync or async): its return value is submitted and returned."""
        if inspect.iscoroutinefunction(fn):

            @functools.wraps(fn)
            async def async_wrapper(*args: Any, **kwargs: Any) -> Any:
                with self as entered:
                    return entered.submit(await fn(*args, **kwargs))

            return cast(F, async_wrapper)

        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            with self as entered:
                return entered.submit(fn(*args, **kwargs))

        return cast(F, wrapper)


def boundary(
    registry: FactRegistry,
    facts: Sequence[str] = (),
    checks: Sequence[CheckFn] = (),
    require_output: bool = True,
    mode: Mode = "first",
    *,
    name: str | None = None,
) -> BoundaryDeclaration:
    """Declare the facts an output may use and the checks it must pass.

    ``with boundary(reg, facts=[...], checks=[...]) as b: b.submit(output)``, or decorate a
    function whose return value is the output. ``name`` labels the boundary in telemetry.
    """
    return BoundaryDeclaration(registry, facts, checks, require_output, mode, name)
