"""Reading a policy file as plain YAML data, safely.

``yaml.safe_load``'s constructor only: no tag constructs an object or runs code (``!!python/...``
is refused). The file is composed once into a node tree, which gives error messages their line
numbers and catches what ``safe_load`` lets through silently: a duplicate key (YAML keeps the
last one, so a second boundary of the same name would make the first vanish), an alias into
itself, and aliases that expand the document past ``MAX_EXPANDED_NODES`` (an alias bomb: a few
lines that ``safe_load`` turns into a billion-item structure, whose description alone would take
gigabytes); the data is then constructed from that tree.
"""

from __future__ import annotations

from typing import Any

import yaml

from groundplane_otel._echo import echo
from groundplane_otel.otel.policy._reader import KeyPath, PolicyError, Reader

__all__ = ["MAX_EXPANDED_NODES", "read_yaml"]

MAX_EXPANDED_NODES = 10_000
"""The most nodes a policy may hold once its aliases are expanded (a real policy: hundreds)."""


def read_yaml(source: str) -> tuple[Any, yaml.Node | None]:
    """The parsed document and its node tree (for line numbers), or a located PolicyError."""
    try:
        with open(source, encoding="utf-8") as handle:
            text = handle.read()
    except UnicodeDecodeError as exc:
        raise PolicyError(
            source,
            "",
            f"the file is not UTF-8 text ({exc.reason} at byte {exc.start})",
            "save the policy as UTF-8",
        ) from exc
    except OSError as exc:
        raise PolicyError(
            source,
            "",
            f"cannot read the policy file ({exc.strerror or exc})",
            "check the path (GROUNDPLANE_POLICY, if set from the environment)",
        ) from exc
    root = _compose(source, text)
    try:
        data = None if root is None else _construct(root)
    except yaml.YAMLError as exc:
        line = _mark_line(exc)
        raise PolicyError(
            source,
            "",
            f"refused YAML: {getattr(exc, 'problem', None) or exc}",
            "a policy holds plain data (mappings, lists, strings, numbers, booleans): remove "
            "the tag; no code or object is ever constructed from a policy",
            line,
        ) from exc
    return data, root


def _construct(root: yaml.Node) -> Any:
    """The data of a composed document, as ``yaml.safe_load`` builds it (the text is not parsed
    a second time)."""
    loader = yaml.SafeLoader("")
    try:
        return loader.construct_document(root)
    finally:
        loader.dispose()


def _mark_line(exc: yaml.YAMLError) -> int | None:
    mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
    return None if mark is None else int(mark.line) + 1


def _compose(source: str, text: str) -> yaml.Node | None:
    """The node tree (for line numbers); a syntax error or a duplicate key fails here."""
    try:
        root = yaml.compose(text, Loader=yaml.SafeLoader)
    except RecursionError as exc:
        raise PolicyError(
            source, "", "the document is nested too deeply to read", "flatten the policy"
        ) from exc
    except yaml.YAMLError as exc:
        raise PolicyError(
            source,
            "",
            f"not valid YAML: {getattr(exc, 'problem', None) or exc}",
            "fix the YAML syntax at this line (indentation, a missing colon or quote)",
            _mark_line(exc),
        ) from exc
    _refuse_duplicates(Reader(source, root), root)
    return root


def _expanded(node: yaml.Node, sizes: dict[int, int]) -> int:
    """Nodes ``node`` stands for with every alias expanded (memoised: linear in the tree)."""
    known = sizes.get(id(node))
    if known is not None:
        return known
    size = 1
    if isinstance(node, yaml.MappingNode):
        size += sum(_expanded(k, sizes) + _expanded(v, sizes) for k, v in node.value)
    elif isinstance(node, yaml.SequenceNode):
        size += sum(_expanded(item, sizes) for item in node.value)
    sizes[id(node)] = size
    return size


def _refuse_duplicates(reader: Reader, root: yaml.Node | None) -> None:
    """YAML keeps the last of two equal keys silently (a second boundary would vanish), an
    alias may point into itself, and aliases may multiply the document (a bomb): all fail here.
    Each node is visited once, so an alias bomb costs its size in nodes, not its expansion."""
    seen_nodes: set[int] = set()
    sizes: dict[int, int] = {}
    expanded = 0

    def walk(node: yaml.Node | None, path: KeyPath, open_nodes: frozenset[int]) -> None:
        nonlocal expanded
        if node is None:
            return
        if id(node) in open_nodes:
            reader.fail(path, "an alias refers to a node that contains it", "remove the alias")
        if id(node) in seen_nodes:  # an alias: it stands for its whole subtree again
            expanded += _expanded(node, sizes)
            if expanded > MAX_EXPANDED_NODES:
                reader.fail(
                    path,
                    f"aliases expand the policy past {MAX_EXPANDED_NODES:,} values (an alias "
                    "bomb?)",
                    "write the values out, or reuse fewer and smaller anchors",
                )
            return
        seen_nodes.add(id(node))
        expanded += 1
        inside = open_nodes | {id(node)}
        if isinstance(node, yaml.MappingNode):
            first_line: dict[str, int] = {}
            for key_node, value_node in node.value:
                key = str(key_node.value)
                if key in first_line:
                    reader.fail(
                        (*path, key),
                        f"duplicate key {echo(key)} (first at line {first_line[key]})",
                        "keep one of them: YAML would silently drop the first",
                    )
                first_line[key] = key_node.start_mark.line + 1
                walk(value_node, (*path, key), inside)
        elif isinstance(node, yaml.SequenceNode):
            for index, item in enumerate(node.value):
                walk(item, (*path, index), inside)

    walk(root, (), frozenset())
