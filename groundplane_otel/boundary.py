"""boundary(): declare which facts an output may use and which checks it must pass."""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Iterable, Mapping, Sequence
from contextvars import ContextVar
from types import TracebackType
from typing import Any, TypeVar, cast

from groundplane_otel._runner import REPORT_MODES, CheckFn, ReportMode, run_checks
from groundplane_otel.checks._base import Check, NamedCheck, check_name
from groundplane_otel.errors import ClaimsUnsupported, FactBoundaryError
from groundplane_otel.registry import FactRegistry
from groundplane_otel.report import Report

__all__ = [
    "Boundary",
    "BoundaryDeclaration",
    "Check",
    "CheckFn",
    "NamedCheck",
    "ReportMode",
    "boundary",
    "run_checks",
]

F = TypeVar("F", bound=Callable[..., Any])


def _validate_mode(mode: object) -> ReportMode:
    if mode not in REPORT_MODES:
        raise ValueError(f'mode must be "first" or "all", got {mode!r}')
    return mode


def _fact_names(facts: object) -> tuple[str, ...]:
    if isinstance(facts, (str, bytes, Mapping)) or not isinstance(facts, Iterable):
        raise TypeError(f"facts must be a list of fact names, got {facts!r}")
    names = tuple(facts)
    if not all(isinstance(fact, str) for fact in names):
        raise TypeError(f"facts must be a list of fact names, got {facts!r}")
    return names


def _callables(checks: Sequence[CheckFn]) -> tuple[CheckFn, ...]:
    for check in checks:
        if not callable(check):
            raise TypeError(f"every check must be callable, got {check!r}")
    return tuple(checks)


def _require_mapping(output: object) -> Mapping[str, Any]:
    if isinstance(output, (str, bytes)):
        raise TypeError(
            "submit() takes the model's structured output (a mapping of fields); free prose "
            "is out of scope — have the model emit fields and check those"
        )
    if not isinstance(output, Mapping):
        raise TypeError(f"output must be a mapping of fields, got {type(output).__name__}")
    return output


def _named(check: CheckFn) -> NamedCheck:
    """A check as a NamedCheck: a builder's is kept, a plain callable is named after it."""
    if isinstance(check, NamedCheck):
        return check
    return NamedCheck(check_name(check), check)


class Boundary:
    """One entry of a boundary: a read-only view of the permitted facts and the checks to run.

    ``Boundary(registry, permitted, checks)`` scopes ``registry`` to the ``permitted`` fact
    names (each must be recorded) as ``.registry``; ``facts()`` hands their values to the model.
    """

    def __init__(
        self,
        registry: FactRegistry,
        permitted: Sequence[str],
        checks: Sequence[CheckFn],
        *,
        require_output: bool = True,
        mode: ReportMode = "first",
        name: str | None = None,
    ) -> None:
        if not isinstance(registry, FactRegistry):
            raise TypeError(f"registry must be a FactRegistry, got {type(registry).__name__}")
        self.permitted: tuple[str, ...] = _fact_names(permitted)
        self.registry = registry.view(self.permitted)
        self.checks: tuple[NamedCheck, ...] = tuple(_named(check) for check in _callables(checks))
        self.require_output = require_output
        self.mode: ReportMode = _validate_mode(mode)
        self.name = name
        self.submitted = False
        self.output: Mapping[str, Any] | None = None
        self.last_report: Report | None = None

    @classmethod
    def _trusted(
        cls,
        view: FactRegistry,
        permitted: tuple[str, ...],
        checks: tuple[NamedCheck, ...],
        require_output: bool,
        mode: ReportMode,
        name: str | None,
    ) -> Boundary:
        """An entry from what a declaration already validated (the per-entry fast path)."""
        entered = object.__new__(cls)
        entered.permitted = permitted
        entered.registry = view
        entered.checks = checks
        entered.require_output = require_output
        entered.mode = mode
        entered.name = name
        entered.submitted = False
        entered.output = None
        entered.last_report = None
        return entered

    def facts(self) -> dict[str, Any]:
        """Each permitted fact's value (a deep copy), by name in declaration order: what the
        model may be given (``llm_structured(facts=b.facts())``)."""
        return {name: self.registry.value(name) for name in self.permitted}

    def submit(
        self, output: Mapping[str, Any], mode: ReportMode | None = None
    ) -> Mapping[str, Any]:
        """Check ``output``; return it unchanged when every claim is supported.

        "first" raises the first UnsupportedClaim; "all" raises ClaimsUnsupported with all.
        """
        run_mode = self.mode if mode is None else _validate_mode(mode)
        self.output = _require_mapping(output)
        self.submitted = True
        report = run_checks(self.registry, output, self.checks, run_mode)
        self.last_report = report
        if not report.ok:
            raise ClaimsUnsupported(report)
        return output

    def report(self, output: Mapping[str, Any]) -> Report:
        """Run every check and return the Report; never raises for a model mistake."""
        self.output = _require_mapping(output)
        self.submitted = True
        self.last_report = run_checks(self.registry, output, self.checks, "all")
        return self.last_report

    def validate(self, mode: ReportMode | None = None) -> Mapping[str, Any]:
        """Re-run the checks on the stored output (as ``submit`` does)."""
        if self.output is None:
            raise FactBoundaryError("validate() needs an output: call submit() or report() first")
        return self.submit(self.output, mode)


class BoundaryDeclaration:
    """What ``boundary(...)`` returns: reusable, re-entrant; a context manager and a decorator."""

    def __init__(
        self,
        registry: FactRegistry,
        facts: Sequence[str] = (),
        checks: Sequence[CheckFn] = (),
        require_output: bool = True,
        mode: ReportMode = "first",
        *,
        name: str | None = None,
    ) -> None:
        if not isinstance(registry, FactRegistry):
            raise TypeError(f"registry must be a FactRegistry, got {type(registry).__name__}")
        self.registry = registry
        self.facts = _fact_names(facts)
        self.checks = _callables(checks)
        self.require_output = require_output
        self.mode = _validate_mode(mode)
        self.name = name
        self._named = tuple(_named(check) for check in self.checks)
        self._active: ContextVar[tuple[Boundary, ...]] = ContextVar("groundplane_boundary")

    def __enter__(self) -> Boundary:
        entered = Boundary._trusted(
            self.registry.view(self.facts),
            self.facts,
            self._named,
            self.require_output,
            self.mode,
            self.name,
        )
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
    mode: ReportMode = "first",
    *,
    name: str | None = None,
) -> BoundaryDeclaration:
    """Declare the facts an output may use and the checks it must pass.

    ``with boundary(reg, facts=[...], checks=[...]) as b: b.submit(output)``, or decorate a
    function whose return value is the output. ``name`` labels the boundary in telemetry.
    """
    return BoundaryDeclaration(registry, facts, checks, require_output, mode, name=name)
