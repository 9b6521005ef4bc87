"""The SDK contract (``otel/_engine/sdk``): each listed SDK field and replaced method is on the
installed SDK with the expected type, replay's ``SpanRecord`` holds no SDK field (the engine reads
it through the public span API), and no module outside the contract package touches an SDK
underscore name or replaces an SDK method."""

from __future__ import annotations

import ast
from pathlib import Path
from types import MappingProxyType, MethodType
from typing import Any

from opentelemetry import trace
from opentelemetry.attributes import BoundedAttributes
from opentelemetry.proto.trace.v1.trace_pb2 import Span as ProtoSpan
from opentelemetry.sdk._logs import LoggerProvider
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.trace import (
    ConcurrentMultiSpanProcessor,
    ReadableSpan,
    Span,
    SpanLimits,
    SynchronousMultiSpanProcessor,
    Tracer,
    TracerProvider,
)

import groundplane_otel
from groundplane_otel.otel._engine import sdk
from groundplane_otel.otel._engine.sdk.hooks import PublicSpan
from groundplane_otel.otel.replay.records import SpanRecord, proto_span
from tests.otel.otel_harness import Harness, sales_config

PACKAGE = Path(groundplane_otel.__file__).parent
CONTRACT = Path(sdk.__file__).parent  # the contract package: sdk/__init__, hooks, dispatch
# Writes that replace an SDK method or class on an instance (``x.end = ...``, ``del x.end``).
REPLACED_NAMES = frozenset(r.name for r in sdk.REPLACED)


def _samples() -> list[Any]:
    """Real SDK objects of every kind the contract names: two providers (one per dispatcher)
    with a tracer each, a root and a child span, live and finished, their attributes."""
    concurrent = TracerProvider(active_span_processor=ConcurrentMultiSpanProcessor())
    samples: list[Any] = []
    for provider in (TracerProvider(), concurrent):
        tracer = provider.get_tracer("contract")
        root = tracer.start_span("root", attributes={"k": "v"})
        child = tracer.start_span("child", context=trace.set_span_in_context(root))
        samples += [provider, tracer, provider._active_span_processor, root, child]
        samples += [root._readable_span(), child._readable_span(), root._attributes]
    return samples


def _sdk_names() -> frozenset[str]:
    """Every underscore (non-dunder) name of the SDK objects the guard deals with: their
    instances' fields and their classes' attributes."""
    names: set[str] = set()
    objects = [*_samples(), MeterProvider(), LoggerProvider(), SpanLimits()]
    for obj in objects:
        names.update(vars(obj) if hasattr(obj, "__dict__") else ())
        names.update(dir(type(obj)))
    return frozenset(name for name in names if name.startswith("_") and not name.endswith("__"))


def _touches(path: Path, sdk_names: frozenset[str]) -> list[tuple[str, int, str]]:
    """``(file, line, name)`` for each SDK underscore name ``path`` reads or writes: an
    attribute on anything but ``self``/``cls`` (our classes' own fields), or a string literal
    (``getattr``/``hasattr``/``setattr`` by name)."""
    found: list[tuple[str, int, str]] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Attribute) and node.attr in sdk_names:
            if not (isinstance(node.value, ast.Name) and node.value.id in ("self", "cls")):
                found.append((path.name, node.lineno, node.attr))
        elif isinstance(node, ast.Constant) and node.value in sdk_names:
            found.append((path.name, node.lineno, str(node.value)))
    return found


def _replacements(path: Path) -> list[tuple[str, int, str]]:
    """``(file, line, what)`` for each runtime replacement of a method or class in ``path``:
    an assignment to or ``del`` of ``x.end``/``x.on_start``/``x.on_end``/``x.__class__``/...,
    a ``MethodType`` binding, a class built with ``type(name, bases, namespace)``."""
    found: list[tuple[str, int, str]] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        targets: list[ast.expr] = []
        if isinstance(node, ast.Assign | ast.Delete):
            targets = [
                element
                for target in node.targets
                for element in (target.elts if isinstance(target, ast.Tuple) else [target])
            ]
        for target in targets:
            if isinstance(target, ast.Attribute) and target.attr in REPLACED_NAMES:
                found.append((path.name, node.lineno, target.attr))
        called = (
            node.func.id if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) else ""
        )
        if called == "MethodType" or (called == "type" and len(getattr(node, "args", ())) == 3):
            found.append((path.name, node.lineno, called))
    return found


def _modules(inside_contract: bool) -> list[Path]:
    return [
        path
        for path in sorted(PACKAGE.rglob("*.py"))
        if (CONTRACT in path.parents) is inside_contract
    ]


def test_every_listed_field_is_on_the_installed_sdk_with_its_type() -> None:
    """Each field of ``sdk.FIELDS`` is held, with one of its listed types, by every real SDK
    object of its owner class (live and finished spans, both dispatchers, their providers)."""
    samples = _samples()
    checked: dict[tuple[type, str], int] = {}
    for field in sdk.FIELDS:
        owners = [sample for sample in samples if isinstance(sample, field.owner)]
        for sample in owners:
            value = getattr(sample, field.name)
            assert isinstance(value, field.kinds), (field, type(sample), type(value))
        checked[field.owner, field.name] = len(owners)
    assert checked == {
        (ReadableSpan, "_context"): 8,
        (ReadableSpan, "_parent"): 8,
        (ReadableSpan, "_name"): 8,
        (ReadableSpan, "_attributes"): 8,
        (ReadableSpan, "_status"): 8,
        (Span, "_readable_span"): 4,
        (BoundedAttributes, "_dict"): 2,
        (BoundedAttributes, "maxlen"): 2,
        (TracerProvider, "_active_span_processor"): 2,
        (TracerProvider, "_tracers"): 2,
        (TracerProvider, "_tracers_lock"): 2,
        (TracerProvider, "_span_limits"): 2,
        (Tracer, "span_processor"): 2,
        (SynchronousMultiSpanProcessor, "_span_processors"): 1,
        (SynchronousMultiSpanProcessor, "_lock"): 1,
        (ConcurrentMultiSpanProcessor, "_span_processors"): 1,
        (ConcurrentMultiSpanProcessor, "_lock"): 1,
        (ConcurrentMultiSpanProcessor, "_executor"): 1,
    }
    assert sdk.sdk_layout() is True
    assert sdk.DISPATCH_STATE == ("_span_processors", "_lock", "_executor")


def test_every_replaced_method_is_the_sdks_and_the_riding_class_replaces_only_those() -> None:
    """Each ``sdk.REPLACED`` name is an attribute of its SDK owner class; the riding dispatcher
    class overrides exactly the names listed for its kind, the guard's own hooks are bound per
    instance, and a watched span's ``end`` is replaced on the instance until it runs."""
    for replacement in sdk.REPLACED:
        assert hasattr(replacement.owner, replacement.name), replacement
    for kind in sdk.DISPATCHERS:
        harness = Harness()
        harness.tracer_provider = TracerProvider(active_span_processor=kind())
        harness.tracer = harness.tracer_provider.get_tracer("contract")
        guard = harness.install(sales_config(mode="observe"))
        riding = type(harness.tracer_provider._active_span_processor)
        assert riding.__bases__ == (kind,)
        overridden = set(vars(riding)) - {"__module__", "__doc__"}
        listed = {r.name for r in sdk.REPLACED if r.owner is kind and r.name != "__class__"}
        assert overridden == listed == {"on_start", "on_end", "shutdown", "__eq__", "__hash__"}
        assert type(vars(guard.processor)["on_start"]) is MethodType
        assert type(vars(guard.processor)["on_end"]) is MethodType
        span = harness.tracer.start_span("chat model")
        guard.processor.watch(span)
        assert "end" in vars(span)
        span.end()
        assert "end" not in vars(span)
        harness.close()


def test_a_span_record_holds_no_sdk_field_and_is_read_through_the_public_api() -> None:
    """A replayed ``SpanRecord`` holds no SDK underscore name (its own or its class's), so nothing
    reads it as the SDK's span layout; the public reads see its plain fields (its attributes as
    its own dict, a local parent)."""
    proto = ProtoSpan(trace_id=b"\x01" * 16, span_id=b"\x02" * 8, parent_span_id=b"\x03" * 8)
    proto.name = "chat model"
    proto.attributes.add(key="k").value.string_value = "v"
    record = SpanRecord(proto_span(proto, {}), parent_present=True)
    names = _sdk_names()
    held = (set(vars(record)) | set(vars(SpanRecord))) - {"_abc_impl"}  # ABCMeta's, any Span
    assert sorted(held & names) == []
    assert sdk.span_attributes(record) is record.attributes
    assert dict(record.attributes) == {"k": "v"}
    assert record.name == "chat model"
    parent = record.parent
    assert parent is not None
    trace_id = int.from_bytes(b"\x01" * 16, "big")
    assert (parent.trace_id, parent.span_id, parent.is_remote) == (
        trace_id,
        0x03 * 0x0101010101010101,
        False,
    )
    context = record.get_span_context()
    assert (context.trace_id, context.span_id) == (trace_id, 0x02 * 0x0101010101010101)
    assert record.is_recording()


def test_a_public_span_reads_what_the_hooks_read_on_an_sdk_span() -> None:
    """On an SDK whose layout the hooks do not know, the same hooks run on a ``PublicSpan``: the
    span read through the public API into the fields they read, equal to an SDK span's own
    (live and finished, root and child); attributes another processor made some other mapping
    become a plain dict."""
    tracer = TracerProvider().get_tracer("contract")
    root = tracer.start_span("root", attributes={"k": "v"})
    child = tracer.start_span("child", context=trace.set_span_in_context(root))
    spans: list[Any] = [root, child, root._readable_span(), child._readable_span()]
    for span in spans:
        view = PublicSpan(span)
        assert view.span is span
        assert view._parent == (None if span._parent is None else tuple(span._parent)[:3])
        assert view._context == tuple(span._context)[:2]
        assert view._name == span._name
        assert type(view._attributes) is dict
        assert view._attributes == span._attributes._dict
    replaced = child._readable_span()
    replaced._attributes = MappingProxyType({"k": "w"})  # type: ignore[assignment]
    assert PublicSpan(replaced)._attributes == {"k": "w"}
    assert type(PublicSpan(replaced)._attributes) is dict


def _span() -> Span:
    span = TracerProvider().get_tracer("contract").start_span("probe")
    assert isinstance(span, Span)
    return span


def test_no_module_outside_the_contract_touches_an_sdk_private_name() -> None:
    """No module of the package outside ``otel/_engine/sdk/`` reads or writes an SDK
    underscore name (by attribute or by string), while the contract package does (the scan
    sees them), and only names ``sdk.FIELDS`` or ``sdk.REPLACED`` lists."""
    names = _sdk_names()
    assert {"_attributes", "_span_processors", "_tracers_lock", "_span_limits"} <= names
    outside = [hit for path in _modules(inside_contract=False) for hit in _touches(path, names)]
    assert outside == []
    inside = {hit[2] for path in _modules(inside_contract=True) for hit in _touches(path, names)}
    listed = {field.name for field in sdk.FIELDS} | REPLACED_NAMES
    assert inside - listed == set()
    assert {"_parent", "_context", "_name", "_dict", "_span_processors", "_status"} <= inside


def test_no_module_outside_the_contract_replaces_a_method_or_class() -> None:
    """Outside ``otel/_engine/sdk/`` no module of ``otel/`` assigns or deletes ``end``,
    ``on_start``, ``on_end``, ``shutdown`` or ``__class__`` on an object, binds a
    ``MethodType`` or builds a class with ``type()``; the contract package does all three."""
    otel = PACKAGE / "otel"
    outside = [
        hit
        for path in _modules(inside_contract=False)
        if otel in path.parents
        for hit in _replacements(path)
    ]
    assert outside == []
    inside = {hit[2] for path in _modules(inside_contract=True) for hit in _replacements(path)}
    assert inside == {"end", "on_start", "on_end", "__class__", "MethodType", "type"}
