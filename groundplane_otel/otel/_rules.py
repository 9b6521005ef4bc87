"""The rules a guard configuration must satisfy, in one place: the config dataclasses raise them
(``ValueError``/``TypeError``, for a configuration built in code) and the policy loader reports
them located (``PolicyError`` with file, line and key). Each rule returns a ``Problem`` (what is
wrong, how to fix it) or None, so both callers say the same thing.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from groundplane_otel._echo import echo

__all__ = [
    "Problem",
    "close_to",
    "fact_not_declared",
    "match_names",
    "name_sequence",
    "not_a_check",
    "scalar_attributes",
]


@dataclass(frozen=True, slots=True)
class Problem:
    """A broken rule: ``problem`` (what is wrong) and ``fix`` (what to write instead)."""

    problem: str
    fix: str

    def text(self, owner: str) -> str:
        """The message of the exception a configuration built in code raises."""
        return f"{owner}: {self.problem}. Fix: {self.fix}"


def close_to(word: object, choices: Sequence[str]) -> str | None:
    """The closest of ``choices`` to a misspelt ``word``, if one is close enough."""
    if not isinstance(word, str):
        return None
    close = difflib.get_close_matches(word, list(choices), n=1, cutoff=0.6)
    return close[0] if close else None


def fact_not_declared(fact: str, declared: Sequence[str]) -> Problem | None:
    """A boundary reads ``fact``, which no FactSpec (policy ``facts:`` entry) declares."""
    if fact in declared:
        return None
    close = close_to(fact, declared)
    fix = (
        f"did you mean {close!r}?"
        if close
        else "declare it under `facts:` (in code: a FactSpec) with the tool whose result it is"
    )
    return Problem(f"fact {echo(fact)} is not declared under facts", fix)


def name_sequence(field: str, value: object) -> Problem | None:
    """``value`` must be a non-empty sequence of non-empty strings (a boundary's ``facts``).
    A bare string is the classic ``("sales")`` slip: it names the one-element tuple to write."""
    if isinstance(value, str):
        return Problem(
            f"{field} must be a sequence of names, got the string {echo(value)}",
            f"write {field}=({value!r},) (a one-element tuple needs the comma)",
        )
    if not isinstance(value, (list, tuple)) or not value:
        shown = "an empty sequence" if isinstance(value, (list, tuple)) else echo(value)
        return Problem(
            f"{field} must be a non-empty sequence of names, got {shown}",
            f"write {field}=('fact_name',)",
        )
    for item in value:
        if not isinstance(item, str) or not item:
            return Problem(
                f"every name in {field} must be a non-empty string, got {echo(item)}",
                f"write {field}=('fact_name',)",
            )
    return None


def not_a_check(value: Any) -> Problem | None:
    """``value`` must be a check a builder made (``NamedCheck``): not the builder itself
    (``superlative`` passed uncalled), not a check's name as a string."""
    from groundplane_otel.checks._base import NamedCheck  # checks import the core, not otel

    if isinstance(value, NamedCheck):
        return None
    if isinstance(value, str):
        return Problem(
            f"checks must be checks, got the string {echo(value)}",
            f"build it: {value}(fact=..., ...) from groundplane_otel (a policy file names "
            "checks by string; code calls the builder)",
        )
    name = getattr(value, "__name__", None)
    if (
        callable(value)
        and isinstance(name, str)
        and getattr(value, "__module__", "").startswith("groundplane_otel.checks")
    ):
        return Problem(
            f"{name} was passed as a check without being called: it builds the check",
            f'call it with the fact it reads, e.g. {name}("fact", ...), and pass what it returns',
        )
    if callable(value):
        return Problem(
            f"checks must be NamedCheck values, got the callable {echo(name or value)}",
            "wrap it: NamedCheck('my_check', fn) (from groundplane_otel), or use a builder "
            "such as superlative(...)",
        )
    return Problem(
        f"checks must be NamedCheck values, got {type(value).__name__}",
        "build each check with a builder such as superlative(...)",
    )


def match_names(values: Mapping[str, object]) -> Problem | None:
    """A MatchSpec's ``agent_name``/``operation_name``/``span_name``: None or a non-empty str."""
    for field, value in values.items():
        if value is not None and (not isinstance(value, str) or not value):
            return Problem(
                f"match.{field} must be a non-empty string or None, got {echo(value)}",
                "write a name here, or leave it out",
            )
    return None


def scalar_attributes(attributes: object) -> Problem | None:
    """A MatchSpec's ``attributes``: a mapping of attribute names to one str/int/bool each."""
    if not isinstance(attributes, Mapping):
        return Problem(
            f"match.attributes must be a mapping, got {echo(attributes)}",
            "write attributes={'attribute.name': value}",
        )
    for key, value in attributes.items():
        if not isinstance(key, str) or not isinstance(value, (str, int, bool)):
            return Problem(
                f"match.attributes[{echo(key)}]: expected a string, integer or boolean, got "
                f"{echo(value)}",
                "match on a single attribute value",
            )
    return None
