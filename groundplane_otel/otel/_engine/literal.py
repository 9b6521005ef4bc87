"""A tool result written as a Python literal, read safely and bounded.

The OpenAI Agents SDK sends a dict tool result to the model as ``str(result)`` — its Python
``repr``: single quotes, ``True``/``None`` (``agents/items.py``) — and that is the text
util-genai's completion hook is given. ``parse_tool_text`` reads tool result text as JSON
(``parse_payload``), else as a Python literal of plain data: ``ast.parse`` then
``ast.literal_eval`` on the checked tree (never ``eval``), bounded:

- at most ``MAX_LITERAL_CHARS`` characters (the parser builds about 200 bytes of tree per
  character of dense text: measured on the 2-core machine, 64 KiB of ``[0,0,…]`` takes ~12 MB
  and 0.1 to 0.3 s, an 865-character dict about 0.5 ms);
- nesting within ``max_depth`` (and the parser's own 200 levels, a SyntaxError, not a crash);
- dicts (str/int/float/bool/None keys, none repeated), lists, tuples, str, int, finite float,
  bool and None only: a set, bytes, a call, a name or an operator is refused.

Every refusal is a ``Parsed`` with a content-free ``problem`` (``rejected``: too long or too
deep; ``unparseable``: not plain data).
"""

from __future__ import annotations

import ast
import math
from typing import Any, Final

from groundplane_otel.otel._engine.payload import Parsed, ParseStatus, parse_payload

__all__ = ["MAX_LITERAL_CHARS", "parse_literal", "parse_tool_text"]

MAX_LITERAL_CHARS: Final = 64 * 1024
_ATOMS = frozenset({str, int, float, bool, type(None)})
_NUMBERS = frozenset({int, float})
_CONTAINERS = (ast.Dict, ast.List, ast.Tuple)


def parse_tool_text(raw: Any, *, max_bytes: int, max_depth: int) -> Parsed:
    """A tool result: JSON (or an already structured value), else, for text within
    ``max_bytes`` that is not JSON, a Python literal of at most ``MAX_LITERAL_CHARS``
    characters (``parse_literal``)."""
    parsed = parse_payload(raw, max_bytes=max_bytes, max_depth=max_depth)
    if parsed.status != "unparseable" or not parsed.problem.startswith("invalid JSON"):
        return parsed
    text = raw.decode("utf-8") if isinstance(raw, (bytes, bytearray)) else raw
    if not isinstance(text, str):
        return parsed
    return parse_literal(text, max_chars=MAX_LITERAL_CHARS, max_depth=max_depth)


def _refused(status: ParseStatus, size: int, problem: str) -> Parsed:
    return Parsed(status, size=size, problem=f"Python literal: {problem}")


def parse_literal(text: str, *, max_chars: int, max_depth: int) -> Parsed:
    """``text`` as a Python literal of plain data (see the module docstring), or why not."""
    size = len(text)
    if size > max_chars:
        return _refused("rejected", size, f"{size} characters exceed {max_chars}")
    try:
        tree = ast.parse(text.strip(), mode="eval")
    except (MemoryError, RecursionError):  # the parser's stack: "-" * 10**5 + "1"
        return _refused("rejected", size, "too deeply nested to parse")
    except SyntaxError as exc:
        if "too many nested" in str(exc):
            return _refused("rejected", size, "too deeply nested to parse")
        return _refused("unparseable", size, f"invalid syntax ({type(exc).__name__})")
    except ValueError as exc:
        return _refused("unparseable", size, f"invalid syntax ({type(exc).__name__})")
    problem = _problem(tree.body, max_depth)
    if problem:
        status: ParseStatus = "rejected" if problem.startswith("nested") else "unparseable"
        return _refused(status, size, problem)
    try:
        value = ast.literal_eval(tree)
    except (ValueError, TypeError, RecursionError, MemoryError) as exc:  # checked: unexpected
        return _refused("unparseable", size, f"not plain data ({type(exc).__name__})")
    return Parsed("ok", value, size=size)


_NOT_CONSTANT: Final = object()


def _constant(node: ast.AST) -> Any:
    """The value of a constant or a signed number (``-1``, ``+1.5``), else ``_NOT_CONSTANT``."""
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        operand = node.operand
        if not isinstance(operand, ast.Constant) or type(operand.value) not in _NUMBERS:
            return _NOT_CONSTANT
        number: Any = operand.value  # an int or a float (checked above)
        return -number if isinstance(node.op, ast.USub) else number
    return node.value if isinstance(node, ast.Constant) else _NOT_CONSTANT


def _atom_problem(value: Any) -> str:
    kind = type(value)
    if kind not in _ATOMS:
        return f"a {kind.__name__} constant is not plain data"
    if kind is float and not math.isfinite(value):
        return "a non-finite number is refused"
    return ""


def _problem(root: ast.expr, max_depth: int) -> str:
    """Why the tree is not plain data within ``max_depth`` levels ("" when it is), walked
    iteratively (a container at depth ``max_depth`` is one level too deep, as for JSON)."""
    stack: list[tuple[ast.expr, int]] = [(root, 0)]
    while stack:
        node, depth = stack.pop()
        constant = _constant(node)
        if constant is not _NOT_CONSTANT:
            problem = _atom_problem(constant)
            if problem:
                return problem
            continue
        if not isinstance(node, _CONTAINERS):
            return f"a {type(node).__name__} is not plain data"
        if depth >= max_depth:
            return f"nested deeper than {max_depth} levels"
        if isinstance(node, ast.Dict):
            keys = [_NOT_CONSTANT if key is None else _constant(key) for key in node.keys]
            if any(key is _NOT_CONSTANT for key in keys):
                return "a dict key is not a constant"  # {**other} or {(1, 2): ...}
            problem = next(filter(None, map(_atom_problem, keys)), "")
            if problem:
                return problem
            if len(set(keys)) != len(keys):
                return "a repeated dict key"  # literal_eval would keep the last one silently
            stack.extend((value, depth + 1) for value in node.values)
        else:
            stack.extend((item, depth + 1) for item in node.elts)
    return ""
