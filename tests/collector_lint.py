"""Lint OpenTelemetry Collector configs against a pinned distribution manifest.

The fast check of conventions a Collector accepts anyway (the real one: tests/collector/ runs
the project's Collector's ``validate`` and the configs end to end): every component exists in
the distribution and supports the signal of its pipeline, pipelines only name defined components
and every defined component is used, memory_limiter comes first and batch last, environment
variables use ``${env:VAR}``, and the load-balancing exporter is configured the way trace-aware
routing needs.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

KINDS = ("receivers", "processors", "exporters", "connectors", "extensions")
SIGNALS = ("traces", "metrics", "logs")
_SUFFIX = {
    "receivers": "receiver",
    "processors": "processor",
    "exporters": "exporter",
    "connectors": "connector",
    "extensions": "extension",
}

# Component types whose name is not the module name minus its kind suffix.
# (kind, module stem) -> (current type name, deprecated aliases still accepted by the collector).
# The OTLP / load-balancing / remote-write renames are from OPS_NOTES (0.144+); the rest are the
# long-standing snake_case type names of those modules.
TYPE_OVERRIDES: dict[tuple[str, str], tuple[str, tuple[str, ...]]] = {
    ("exporters", "otlp"): ("otlp_grpc", ("otlp",)),
    ("exporters", "otlphttp"): ("otlp_http", ("otlphttp",)),
    ("exporters", "loadbalancing"): ("load_balancing", ("loadbalancing",)),
    ("exporters", "prometheusremotewrite"): ("prometheus_remote_write", ("prometheusremotewrite",)),
    ("processors", "memorylimiter"): ("memory_limiter", ()),
    ("processors", "tailsampling"): ("tail_sampling", ()),
    ("processors", "probabilisticsampler"): ("probabilistic_sampler", ()),
    ("extensions", "healthcheck"): ("health_check", ()),
    ("extensions", "filestorage"): ("file_storage", ()),
}

# Signals per component type, hand-maintained for the components our configs use (plus a few
# close relatives). A component missing here is reported rather than assumed to work.
ALL = frozenset(SIGNALS)
SIGNAL_SUPPORT: dict[tuple[str, str], frozenset[str]] = {
    ("receivers", "otlp"): ALL,
    ("processors", "memory_limiter"): ALL,
    ("processors", "batch"): ALL,
    ("processors", "tail_sampling"): frozenset({"traces"}),
    ("exporters", "otlp_grpc"): ALL,
    ("exporters", "otlp_http"): ALL,
    ("exporters", "debug"): ALL,
    ("exporters", "prometheus"): frozenset({"metrics"}),
    ("exporters", "prometheus_remote_write"): frozenset({"metrics"}),
    ("exporters", "load_balancing"): ALL,
}
# Connectors join an exporting pipeline to a receiving one: (from signal, to signal) pairs.
CONNECTOR_SUPPORT: dict[str, frozenset[tuple[str, str]]] = {
    "forward": frozenset((s, s) for s in SIGNALS),
    "spanmetrics": frozenset({("traces", "metrics")}),
}
LB_RESOLVERS = ("static", "dns", "k8s", "aws_cloud_map")

_ENV_OK = re.compile(r"\$\{env:[A-Za-z_][A-Za-z0-9_]*(:-[^}]*)?\}")
_DOLLAR_ESCAPE = "$$"


@dataclass(frozen=True)
class Distribution:
    """The component types a collector distribution ships, by kind."""

    name: str
    version: str
    types: dict[str, frozenset[str]]
    aliases: dict[tuple[str, str], str]  # (kind, deprecated alias) -> current type name


def type_name(kind: str, gomod: str) -> tuple[str, tuple[str, ...]]:
    """Return (type name, deprecated aliases) for a manifest ``gomod`` line of a given kind."""
    module = gomod.split(maxsplit=1)[0]
    stem = module.rstrip("/").rsplit("/", 1)[-1]
    suffix = _SUFFIX[kind]
    if stem.endswith(suffix) and stem != suffix:
        stem = stem[: -len(suffix)]
    return TYPE_OVERRIDES.get((kind, stem), (stem, ()))


def load_distribution(manifest: Path) -> Distribution:
    """Parse a builder manifest (``otelcol-*-manifest-vX.yaml``) into a Distribution."""
    data = yaml.safe_load(manifest.read_text())
    types: dict[str, frozenset[str]] = {}
    aliases: dict[tuple[str, str], str] = {}
    for kind in KINDS:
        names = set()
        for entry in data.get(kind) or []:
            name, old = type_name(kind, entry["gomod"])
            names.add(name)
            for alias in old:
                aliases[(kind, alias)] = name
        types[kind] = frozenset(names)
    dist = data["dist"]
    return Distribution(dist["name"], str(dist["version"]), types, aliases)


def _singular(kind: str) -> str:
    return _SUFFIX[kind]


def _ctype(component_id: str) -> str:
    return component_id.split("/", 1)[0]


def _walk(node: Any, path: str) -> Iterator[tuple[str, str]]:
    if isinstance(node, dict):
        for key, value in node.items():
            yield from _walk(value, f"{path}.{key}" if path else str(key))
    elif isinstance(node, list):
        for i, value in enumerate(node):
            yield from _walk(value, f"{path}[{i}]")
    elif isinstance(node, str):
        yield path, node


def lint_env_syntax(config: dict[str, Any]) -> list[str]:
    """Flag ``$VAR`` and ``${VAR}`` references: the collector expects ``${env:VAR}``."""
    errors = []
    for path, value in _walk(config, ""):
        rest = _ENV_OK.sub("", value.replace(_DOLLAR_ESCAPE, ""))
        if "$" in rest:
            errors.append(f"{path}: '{value}' is not ${{env:VAR}} syntax")
    return errors


def _pipeline_errors(
    name: str, pipeline: dict[str, Any], defined: dict[str, dict[str, Any]], dist: Distribution
) -> list[str]:
    errors = []
    signal = name.split("/", 1)[0]
    if signal not in SIGNALS:
        return [f"pipeline '{name}': unknown signal '{signal}'"]
    for kind in ("receivers", "processors", "exporters"):
        for cid in pipeline.get(kind) or []:
            is_connector = kind != "processors" and cid in defined["connectors"]
            if cid not in defined[kind] and not is_connector:
                errors.append(f"pipeline '{name}': {_singular(kind)} '{cid}' is not defined")
                continue
            if is_connector:
                continue  # checked pairwise in _connector_errors
            ctype = dist.aliases.get((kind, _ctype(cid)), _ctype(cid))
            if ctype not in dist.types[kind]:
                continue  # already reported as not in the distribution
            support = SIGNAL_SUPPORT.get((kind, ctype))
            what = f"{_singular(kind)} '{cid}'"
            if support is None:
                errors.append(f"{what}: signal support unknown, add it to the table")
            elif signal not in support:
                errors.append(f"pipeline '{name}': {what} does not support {signal}")
    for kind in ("receivers", "exporters"):
        if not pipeline.get(kind):
            errors.append(f"pipeline '{name}': needs at least one {_singular(kind)}")
    processors = [_ctype(p) for p in pipeline.get("processors") or []]
    if not processors or processors[0] != "memory_limiter":
        errors.append(f"pipeline '{name}': memory_limiter must be the first processor")
    if not processors or processors[-1] != "batch":
        errors.append(f"pipeline '{name}': batch must be the last processor")
    return errors


def _connector_errors(pipelines: dict[str, Any], connectors: dict[str, Any]) -> list[str]:
    errors = []
    for cid in connectors:
        support = CONNECTOR_SUPPORT.get(_ctype(cid))
        if support is None:
            errors.append(f"connector '{cid}': signal support unknown, add it to the table")
            continue
        sources = [n for n, p in pipelines.items() if cid in (p.get("exporters") or [])]
        targets = [n for n, p in pipelines.items() if cid in (p.get("receivers") or [])]
        for src in sources:
            for dst in targets:
                pair = (src.split("/", 1)[0], dst.split("/", 1)[0])
                if pair not in support:
                    errors.append(f"connector '{cid}' cannot connect {pair[0]} to {pair[1]}")
    return errors


def _load_balancing_errors(cid: str, cfg: dict[str, Any], pipelines: dict[str, Any]) -> list[str]:
    errors = []
    routing_key = cfg.get("routing_key", "traceID")
    for name, pipeline in pipelines.items():
        uses = cid in (pipeline.get("exporters") or [])
        if uses and routing_key == "traceID" and not name.startswith("traces"):
            errors.append(
                f"exporter '{cid}': routing_key traceID is only valid in traces pipelines "
                f"(used in '{name}')"
            )
    resolver = cfg.get("resolver") or {}
    found = [r for r in LB_RESOLVERS if r in resolver]
    if len(found) != 1:
        errors.append(
            f"exporter '{cid}': exactly one resolver required, found {len(found)} {found}"
        )
    otlp = ((cfg.get("protocol") or {}).get("otlp")) or {}
    if "endpoint" in otlp:
        errors.append(f"exporter '{cid}': protocol.otlp.endpoint must not be set")
    return errors


def lint_config(config: dict[str, Any], dist: Distribution) -> list[str]:
    """Return every problem found in a parsed collector config (empty list when clean)."""
    errors: list[str] = []
    defined = {kind: dict(config.get(kind) or {}) for kind in KINDS}
    service = config.get("service") or {}
    pipelines: dict[str, Any] = service.get("pipelines") or {}
    if not pipelines:
        errors.append("service.pipelines is empty")

    for kind in KINDS:
        for cid in defined[kind]:
            ctype = _ctype(cid)
            current = dist.aliases.get((kind, ctype))
            if current is not None:
                errors.append(
                    f"{_singular(kind)} '{cid}' uses deprecated name '{ctype}'; use '{current}'"
                )
            elif ctype not in dist.types[kind]:
                errors.append(
                    f"{_singular(kind)} '{cid}': type '{ctype}' is not in "
                    f"{dist.name} {dist.version}"
                )

    for name, pipeline in pipelines.items():
        errors.extend(_pipeline_errors(name, pipeline or {}, defined, dist))
    errors.extend(_connector_errors(pipelines, defined["connectors"]))

    used = {
        cid
        for pipeline in pipelines.values()
        for kind in ("receivers", "processors", "exporters")
        for cid in (pipeline or {}).get(kind) or []
    }
    for kind in ("receivers", "processors", "exporters", "connectors"):
        for cid in defined[kind]:
            if cid not in used:
                errors.append(f"{_singular(kind)} '{cid}' is defined but not used in any pipeline")
    enabled = service.get("extensions") or []
    for cid in enabled:
        if cid not in defined["extensions"]:
            errors.append(f"service.extensions: extension '{cid}' is not defined")
    for cid in defined["extensions"]:
        if cid not in enabled:
            errors.append(f"extension '{cid}' is defined but not enabled in service.extensions")

    for cid, cfg in defined["exporters"].items():
        if dist.aliases.get(("exporters", _ctype(cid)), _ctype(cid)) == "load_balancing":
            errors.extend(_load_balancing_errors(cid, cfg or {}, pipelines))

    errors.extend(lint_env_syntax(config))
    return errors


def lint_file(path: Path, dist: Distribution) -> list[str]:
    """Lint one YAML file; messages are prefixed with the file name."""
    config = yaml.safe_load(path.read_text())
    return [f"{path.name}: {msg}" for msg in lint_config(config, dist)]
