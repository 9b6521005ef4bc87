"""PolicyError and the reader that walks a policy document: key paths, line numbers, type checks.

Every failure names the file (and line, when the document came from YAML), the key path
(``boundaries.campaign_report.checks[0].superlative.k``), the problem and the fix.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any, NoReturn, TypeVar

import yaml

from groundplane_otel._echo import capped, echo
from groundplane_otel.otel._rules import close_to as suggest

__all__ = ["KeyPath", "PolicyError", "Reader", "format_path", "suggest"]

KeyPath = tuple[str | int, ...]
_T = TypeVar("_T")
_PLAIN_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*\Z")


class PolicyError(ValueError):
    """A policy file (or mapping) that cannot be loaded: names the source, key path and fix.

    ``errors`` holds every error found in the document, by line (this one alone
    when it is the only one); with several, this error's fields are the first's and its
    message lists them all, one a line (``combined``)."""

    def __init__(
        self, source: str, path: str, problem: str, fix: str, line: int | None = None
    ) -> None:
        self.source = source
        self.path = path
        self.problem = problem
        self.fix = fix
        self.line = line
        self.errors: tuple[PolicyError, ...] = (self,)
        where = source if line is None else f"{source}:{line}"
        super().__init__(f"{where}: {path or '<top level>'}: {problem}. Fix: {fix}")

    @classmethod
    def combined(cls, errors: Sequence[PolicyError]) -> PolicyError:
        """One error for ``errors`` (at least one): the only one, or the first's fields with
        every message, one a line after a count."""
        if len(errors) == 1:
            return errors[0]
        first = errors[0]
        error = cls(first.source, first.path, first.problem, first.fix, first.line)
        error.errors = tuple(errors)
        lines = "\n".join(str(item) for item in errors)
        error.args = (f"{len(errors)} errors in {first.source}:\n{lines}",)
        return error


def format_path(path: KeyPath) -> str:
    """``boundaries.campaign_report.checks[0].superlative`` (odd keys quoted; each part capped
    like every echoed value)."""
    text = ""
    for part in path:
        if isinstance(part, int):
            text += f"[{part}]"
        elif _PLAIN_KEY.match(part):
            text += f".{capped(part)}" if text else capped(part)
        else:
            text += f"[{echo(part)}]"
    return text


def show(value: object) -> str:
    """A YAML-minded description of a value for error messages."""
    if value is None:
        return "null (an empty value)"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, Mapping):
        return "a mapping" if value else "an empty mapping"
    if isinstance(value, (list, tuple)):
        return "a list" if value else "an empty list"
    return echo(value)


def _line_of(node: yaml.Node | None, path: KeyPath) -> int | None:
    """1-based line of the key (or list item) at ``path`` in a composed YAML tree."""
    line = None if node is None else node.start_mark.line + 1
    for part in path:
        if isinstance(node, yaml.MappingNode):
            pairs = [(k, v) for k, v in node.value if str(getattr(k, "value", None)) == str(part)]
            if not pairs:
                return line
            key_node, node = pairs[-1]  # YAML keeps the last of duplicate keys
            line = key_node.start_mark.line + 1
        elif isinstance(node, yaml.SequenceNode) and isinstance(part, int):
            if not 0 <= part < len(node.value):
                return line
            node = node.value[part]
            line = node.start_mark.line + 1
        else:
            return line
    return line


class Reader:
    """Reads one policy document; ``fail`` raises a PolicyError located in it."""

    def __init__(self, source: str, root: yaml.Node | None = None) -> None:
        self.source = source
        self.root = root
        self.errors: list[PolicyError] = []  # kept by ``attempt``, raised by ``raise_errors``

    def fail(self, path: KeyPath, problem: str, fix: str) -> NoReturn:
        raise self.error(path, problem, fix)

    def error(self, path: KeyPath, problem: str, fix: str) -> PolicyError:
        return PolicyError(self.source, format_path(path), problem, fix, _line_of(self.root, path))

    def attempt(self, read: Callable[[], _T]) -> _T | None:
        """``read()``; on a PolicyError None, the error kept so that reading goes on and every
        error in the document is reported (``raise_errors``)."""
        try:
            return read()
        except PolicyError as exc:
            self.errors.extend(exc.errors)
            return None

    def raise_errors(self) -> None:
        """Raise every error kept, as one (``PolicyError.combined``), in the order of the
        file's lines (those without a line, from a mapping, in the order found)."""
        if self.errors:
            ordered = sorted(self.errors, key=lambda error: error.line or 0)
            raise PolicyError.combined(ordered)

    def mapping(
        self,
        path: KeyPath,
        value: object,
        allowed: Sequence[str],
        *,
        required: Sequence[str] = (),
        example: str = "",
    ) -> Mapping[str, Any]:
        """``value`` as a mapping whose keys are all in ``allowed`` and include ``required``."""
        if not isinstance(value, Mapping):
            fix = f"write a mapping here{example}" if example else "write a mapping here"
            self.fail(path, f"expected a mapping, got {show(value)}", fix)
        unknown = []
        for key in value:
            if not isinstance(key, str) or key not in allowed:
                close = suggest(key, allowed)
                fix = f"rename it to {close!r}" if close else f"use one of: {', '.join(allowed)}"
                unknown.append(self.error((*path, str(key)), f"unknown key {echo(key)}", fix))
        if unknown:  # every unknown key told; the mapping is not read further
            self.errors.extend(unknown[:-1])
            raise unknown[-1]
        for key in required:
            if key not in value:
                self.fail(path, f"missing required key {key!r}", f"add `{key}:` here")
        return value

    def names(self, path: KeyPath, value: object, what: str) -> Iterator[tuple[str, Any]]:
        """The entries of a mapping keyed by user-chosen names (facts, boundaries)."""
        if not isinstance(value, Mapping):
            self.fail(
                path,
                f"expected a mapping of {what} names, got {show(value)}",
                f"write `<{what} name>: {{...}}` entries here",
            )
        for key, item in value.items():
            if not isinstance(key, str) or not key:  # told, and the others read on
                self.errors.append(
                    self.error(
                        (*path, str(key)),
                        f"{what} names must be non-empty strings, got {show(key)}",
                        "quote the name (YAML reads yes/no/on/off as booleans and digits as "
                        "numbers)",
                    )
                )
                continue
            yield key, item

    def string(self, path: KeyPath, value: object) -> str:
        if not isinstance(value, str) or not value:
            self.fail(path, f"expected a non-empty string, got {show(value)}", "write a name here")
        return value

    def optional_string(self, path: KeyPath, value: object) -> str | None:
        if value is None:
            return None
        if not isinstance(value, str) or not value:
            self.fail(
                path,
                f"expected a non-empty string or null, got {show(value)}",
                "write a name here, or leave the key out",
            )
        return value

    def boolean(self, path: KeyPath, value: object) -> bool:
        if not isinstance(value, bool):
            self.fail(path, f"expected true or false, got {show(value)}", "write true or false")
        return value

    def choice(self, path: KeyPath, value: object, choices: Sequence[str]) -> str:
        if not isinstance(value, str) or value not in choices:
            close = suggest(value, choices)
            fix = f"did you mean {close!r}?" if close else f"use one of: {', '.join(choices)}"
            self.fail(path, f"expected one of {', '.join(choices)}, got {show(value)}", fix)
        return value

    def string_list(self, path: KeyPath, value: object) -> list[str]:
        if not isinstance(value, list) or not value:
            self.fail(
                path,
                f"expected a non-empty list of names, got {show(value)}",
                "write a list such as [campaign_ctr]",
            )
        for index, item in enumerate(value):
            self.string((*path, index), item)
        return value
