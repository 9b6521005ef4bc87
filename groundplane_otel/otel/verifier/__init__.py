"""The fleet verifier: an OTLP/gRPC trace receiver that checks whole traces after the fact.

Agents whose tools run in another service (an MCP server, a retrieval or SQL service) cannot be
guarded in process: only something that sees the whole trace can check the answer. The verifier
receives spans from every service (behind the Collector's ``load_balancing`` exporter, routed by
trace id, so each replica gets whole traces), assembles them in a bounded buffer (``Replayer``:
max traces, max spans per trace — every drop counted) and runs the policy through the guard's
own engine (replay's driver), **observe only** (it sees answers after they reached the user:
it never claims a block). A trace is decided ``root_wait_s`` after its root span (no parent)
arrived — the root ends last, so the answer and its facts are in; the wait lets other
services' batches land — or, when no root ever arrives, ``idle_timeout_s`` after its last
span. A trace the engine raises on is counted ``failed`` and logged once; the decision loop,
the intake and the drain go on.
Requests over ``max_receive_message_bytes`` are refused (``INVALID_ARGUMENT``, which OTLP
clients do not retry) and counted, with the spans they held (``otlp_wire.span_count``: read
from the wire format, never decoded; unknown when it cannot be told, counted apart). A span
with unusable ids is counted unreadable and its trace ``incomplete``. From the engine's results it
exports the same ``groundplane.*`` metrics with ``groundplane.mode="verifier"``, one
``gen_ai.guardrail.result`` log record per finding carrying the guarded span's trace and span
ids, and its own intake counters. ``/healthz`` answers 200 while serving and 503 while
draining; ``stop()`` drains (decides every buffered trace), then flushes.
"""

from __future__ import annotations

import dataclasses
import logging
import socket
import threading
import time
from collections import OrderedDict
from collections.abc import Iterator, Sequence
from concurrent import futures
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import grpc  # type: ignore[import-untyped]
from google.protobuf.message import DecodeError  # type: ignore[import-untyped]
from opentelemetry.metrics import CallbackOptions, MeterProvider, Observation
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2

from groundplane_otel.otel import semconv as sc
from groundplane_otel.otel.config import GuardConfig
from groundplane_otel.otel.replay import Replayer, TraceToDecide
from groundplane_otel.otel.replay.records import RecordedSpan, proto_spans
from groundplane_otel.otel.verifier.addresses import bind_problem, parse_address
from groundplane_otel.otel.verifier.wire import span_count

__all__ = ["MODE_VERIFIER", "Verifier", "VerifierServer", "VerifierStats", "observe_only"]

MODE_VERIFIER = "verifier"
DEFAULT_MAX_RECEIVE_MESSAGE_BYTES = 4 * 1024 * 1024  # gRPC's own default
_SERVICE = "opentelemetry.proto.collector.trace.v1.TraceService"
# Every export gets the same empty answer: one, never changed, rather than one made per request.
_ACCEPTED = trace_service_pb2.ExportTraceServiceResponse()
_parse = trace_service_pb2.ExportTraceServiceRequest.FromString  # a request's bytes, parsed
_log = logging.getLogger(__name__)


def observe_only(config: GuardConfig) -> GuardConfig:
    """The policy with every boundary in observe mode (the verifier never raises)."""
    boundaries = tuple(dataclasses.replace(spec, mode="observe") for spec in config.boundaries)
    return dataclasses.replace(config, mode="observe", boundaries=boundaries)


@dataclasses.dataclass(slots=True)
class VerifierStats:
    """How each trace was decided and what became of each request; one outcome per trace:
    ``root_ended`` (its root span arrived), ``idle`` (no root: the idle timeout or the drain),
    ``incomplete`` (decided early, buffer full, or lost spans), ``failed`` (the engine raised)."""

    root_ended: int = 0
    idle: int = 0
    incomplete: int = 0
    failed: int = 0
    failures: dict[str, int] = dataclasses.field(default_factory=dict)  # by exception type
    oversize_requests: int = 0  # over max_receive_message_bytes, refused
    oversize_spans: int = 0  # the spans those requests held (when they could be counted)
    oversize_uncounted: int = 0  # oversize requests whose spans could not be counted
    unreadable_requests: int = 0  # not an ExportTraceServiceRequest, or intake raised


class _Refused:
    """A request the verifier will not read: the gRPC status it gets back, and why."""

    __slots__ = ("code", "message")

    def __init__(self, code: Any, message: str) -> None:
        self.code, self.message = code, message


class _TraceBuffer(Replayer):
    """Replay's buffer with the verifier's rule: a trace is due ``root_wait_s`` after its root
    span arrived; deciding one never raises (a failure is counted, logged once)."""

    def __init__(
        self, config: GuardConfig, stats: VerifierStats, root_wait_s: float, **options: Any
    ) -> None:
        super().__init__(config, around_decision=self._decided, **options)
        self.verifier_stats = stats
        self.root_wait_s = root_wait_s
        self.roots: OrderedDict[bytes, float] = OrderedDict()  # trace id -> when it is due

    def feed(
        self,
        request: trace_service_pb2.ExportTraceServiceRequest | Sequence[RecordedSpan],
        location: str = "request",
    ) -> None:
        if isinstance(request, trace_service_pb2.ExportTraceServiceRequest):
            request = proto_spans(request, self.resources)
        due = None  # read from the clock once, when the request holds a root
        roots = self.roots
        for span in request:
            if not span.parent_span_id:
                if due is None:
                    due = time.monotonic() + self.root_wait_s
                roots.setdefault(span.trace_id, due)
        self.assembler.feed(request, location)  # what Replayer.feed does, a call less

    def decide_roots(self) -> int:
        """Decide the traces whose root arrived ``root_wait_s`` ago; how many were decided."""
        now, decided, roots = time.monotonic(), 0, self.roots
        while roots:
            trace_id, due = next(iter(roots.items()))
            if due > now:
                break
            if self.assembler.decide(trace_id):  # what Replayer.decide does, a call less
                decided += 1
            else:  # already decided (buffer full)
                roots.pop(trace_id, None)
        return decided

    def _decided(self, decision: TraceToDecide) -> None:
        """Every decision: run, counted by how it came (root, idle, incomplete), never
        raising."""
        stats, trace_id = self.verifier_stats, decision.trace_id
        rooted = self.roots.pop(trace_id, None) is not None
        try:
            decision.run()
        except Exception as exc:
            reason = type(exc).__name__
            stats.failed += 1
            stats.failures[reason] = stats.failures.get(reason, 0) + 1
            _log.warning(
                "groundplane-otel verifier: trace %s (%d spans) not decided: %s: %.200s",
                trace_id.hex(),
                decision.spans,
                reason,
                exc,
            )
            return
        if decision.incomplete:
            stats.incomplete += 1
        elif rooted:
            stats.root_ended += 1
        else:
            stats.idle += 1


class Verifier:
    """The receiving end of OTLP/gRPC ``TraceService/Export``: every export is fed to one trace
    buffer under a lock; ``tick`` decides what is due, ``drain`` everything (never raising)."""

    def __init__(
        self,
        config: GuardConfig,
        *,
        meter_provider: MeterProvider,
        logger_provider: Any = None,
        root_wait_s: float = 5.0,
        idle_timeout_s: float = 300.0,
        max_traces: int = 10_000,
        max_spans_per_trace: int = 10_000,
        max_receive_message_bytes: int = DEFAULT_MAX_RECEIVE_MESSAGE_BYTES,
    ) -> None:
        self.stats = VerifierStats()
        self.max_receive_message_bytes = max_receive_message_bytes
        self.replayer = _TraceBuffer(
            observe_only(config),
            self.stats,
            root_wait_s,
            decision_wait=idle_timeout_s,
            max_traces=max_traces,
            max_spans_per_trace=max_spans_per_trace,
            max_findings=0,  # findings go out as log records, not into a report
            clock=time.monotonic,
            meter_provider=meter_provider,
            logger_provider=logger_provider,
            mode_label=MODE_VERIFIER,
        )
        self.lock = threading.Lock()
        meter = meter_provider.get_meter(sc.METER_NAME)
        meter.create_observable_counter(
            sc.METRIC_VERIFIER_SPANS,
            callbacks=[self._observe_spans],
            unit=sc.UNIT_SPAN,
            description="Spans the verifier received, by outcome.",
        )
        meter.create_observable_counter(
            sc.METRIC_VERIFIER_TRACES,
            callbacks=[self._observe_traces],
            unit=sc.UNIT_TRACE,
            description="Traces the verifier decided, by outcome.",
        )
        meter.create_observable_counter(
            sc.METRIC_VERIFIER_REQUESTS,
            callbacks=[self._observe_requests],
            unit=sc.UNIT_REQUEST,
            description="Export requests the verifier received, by outcome.",
        )

    def handler(self) -> Any:
        """The gRPC handler of ``TraceService/Export``, reading requests through ``read``."""
        export = grpc.unary_unary_rpc_method_handler(
            self.Export,
            request_deserializer=self.read,
            response_serializer=trace_service_pb2.ExportTraceServiceResponse.SerializeToString,
        )
        return grpc.method_handlers_generic_handler(_SERVICE, {"Export": export})

    def read(self, data: bytes) -> trace_service_pb2.ExportTraceServiceRequest | _Refused:
        """A request's bytes, or why it is refused (counted): over the size limit, unparsable."""
        if len(data) > self.max_receive_message_bytes:
            spans = span_count(data)  # outside the lock: it walks the whole request
            with self.lock:
                self.stats.oversize_requests += 1
                if spans is None:
                    self.stats.oversize_uncounted += 1
                else:
                    self.stats.oversize_spans += spans
            return _Refused(  # permanent: OTLP clients do not retry INVALID_ARGUMENT
                grpc.StatusCode.INVALID_ARGUMENT,
                f"request of {len(data)} bytes is over the verifier's limit of "
                f"{self.max_receive_message_bytes} (--max-receive-message-bytes)",
            )
        try:
            request: trace_service_pb2.ExportTraceServiceRequest = _parse(data)
        except DecodeError as exc:
            with self.lock:
                self.stats.unreadable_requests += 1
            return _Refused(grpc.StatusCode.INVALID_ARGUMENT, f"unreadable request: {exc}")
        return request

    def Export(
        self, request: trace_service_pb2.ExportTraceServiceRequest | _Refused, context: Any
    ) -> trace_service_pb2.ExportTraceServiceResponse:
        if isinstance(request, _Refused):
            context.abort(request.code, request.message)  # raises: the call ends here
            return _ACCEPTED
        with self.lock:
            try:
                self.replayer.feed(request)
            except Exception as exc:
                self.stats.unreadable_requests += 1
                _log.warning("groundplane-otel verifier: request not read: %r", exc)
                if context is not None:
                    context.abort(grpc.StatusCode.INVALID_ARGUMENT, f"unreadable request: {exc}")
        return _ACCEPTED

    def tick(self) -> int:
        """Decide the traces that are due (root ended, or idle); how many were decided."""
        with self.lock:
            replayer = self.replayer  # most ticks find no root buffered: no call for them
            decided = replayer.decide_roots() if replayer.roots else 0
            return decided + replayer.assembler.decide_ready()  # Replayer's, a call less

    def drain(self) -> None:
        """Decide every buffered trace now (shutdown); never raises."""
        with self.lock:
            try:
                self.replayer.finish()
            except Exception:
                _log.exception("groundplane-otel verifier: drain stopped early")

    def _observe_spans(self, options: CallbackOptions) -> Iterator[Observation]:
        stats = self.replayer.stats
        yield Observation(stats.spans, {sc.VERIFIER_OUTCOME: "received"})
        yield Observation(stats.dropped_spans, {sc.VERIFIER_OUTCOME: "dropped"})
        yield Observation(stats.bad_spans, {sc.VERIFIER_OUTCOME: "unreadable"})
        yield Observation(self.stats.oversize_spans, {sc.VERIFIER_OUTCOME: "oversize"})

    def _observe_traces(self, options: CallbackOptions) -> Iterator[Observation]:
        stats = self.stats
        yield Observation(stats.root_ended, {sc.VERIFIER_OUTCOME: "root_ended"})
        yield Observation(stats.idle, {sc.VERIFIER_OUTCOME: "idle"})
        yield Observation(stats.incomplete, {sc.VERIFIER_OUTCOME: "incomplete"})
        yield Observation(stats.failed, {sc.VERIFIER_OUTCOME: "failed"})

    def _observe_requests(self, options: CallbackOptions) -> Iterator[Observation]:
        stats = self.stats
        yield Observation(self.replayer.stats.requests, {sc.VERIFIER_OUTCOME: "received"})
        yield Observation(stats.oversize_requests, {sc.VERIFIER_OUTCOME: "oversize"})
        yield Observation(stats.oversize_uncounted, {sc.VERIFIER_OUTCOME: "oversize_uncounted"})
        yield Observation(stats.unreadable_requests, {sc.VERIFIER_OUTCOME: "unreadable"})


class _Health(BaseHTTPRequestHandler):
    server: Any

    def do_GET(self) -> None:
        healthy = self.path == "/healthz" and self.server.serving.is_set()
        body = b"ok\n" if healthy else b"draining\n"
        self.send_response(200 if healthy else 503 if self.path == "/healthz" else 404)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        """No access log on stderr."""


class _Health6(ThreadingHTTPServer):
    """The health endpoint on an IPv6 address."""

    address_family = socket.AF_INET6


class VerifierServer:
    """The gRPC server, the decision ticker and the health endpoint around a ``Verifier``.
    ``listen`` and ``health`` are ``HOST:PORT`` (a ValueError says what is wrong with one);
    an address that cannot be bound is an OSError naming it and the real cause."""

    def __init__(
        self,
        verifier: Verifier,
        *,
        listen: str = "127.0.0.1:4317",
        health: str | None = "127.0.0.1:13133",
        workers: int = 4,
        tick_s: float = 0.2,
    ) -> None:
        self.verifier = verifier
        host, port = parse_address(listen)
        health_host, health_port = parse_address(health) if health is not None else ("", 0)
        problem = bind_problem(host, port)
        if problem is not None:
            raise OSError(f"cannot listen on {listen!r}: {problem}")
        self.server = grpc.server(
            futures.ThreadPoolExecutor(max_workers=workers),
            handlers=[verifier.handler()],
            options=[
                ("grpc.so_reuseport", 0),  # a second replica on the port is refused, not split
                ("grpc.max_receive_message_length", -1),  # the verifier's own limit counts
            ],
        )
        try:
            self.port = self.server.add_insecure_port(listen)
        except RuntimeError:  # bound since the probe (a race), or a cause it cannot see
            raise OSError(
                f"cannot listen on {listen!r}: gRPC could not bind it (GRPC_VERBOSITY=debug "
                "shows gRPC's own reason)"
            ) from None
        self.serving = threading.Event()
        self._stopping = threading.Event()
        self._tick_s = tick_s
        self._ticker = threading.Thread(target=self._tick, name="verifier-ticker", daemon=True)
        self.health: ThreadingHTTPServer | None = None
        if health is not None:
            problem = bind_problem(health_host, health_port)
            try:
                if problem is None:
                    kind = _Health6 if ":" in health_host else ThreadingHTTPServer
                    self.health = kind((health_host, health_port), _Health)
            except OSError as exc:
                problem = exc.strerror or str(exc)
            if self.health is None:
                self.server.stop(0)
                raise OSError(f"cannot serve /healthz on {health!r}: {problem}")
            self.health.serving = self.serving  # type: ignore[attr-defined]
        self._health_thread: threading.Thread | None = None

    @property
    def health_port(self) -> int | None:
        return None if self.health is None else int(self.health.server_address[1])

    def start(self) -> VerifierServer:
        self.server.start()
        self._ticker.start()
        if self.health is not None:
            self._health_thread = threading.Thread(
                target=self.health.serve_forever, name="verifier-health", daemon=True
            )
            self._health_thread.start()
        self.serving.set()
        return self

    def _tick(self) -> None:
        while not self._stopping.wait(self._tick_s):
            try:
                self.verifier.tick()
            except Exception:
                _log.exception("groundplane-otel verifier: tick failed")

    def stop(self, grace_s: float = 5.0) -> None:
        """Graceful: refuse new exports, finish those in flight, decide every buffered trace;
        the caller then flushes its meter and logger providers. Never started: the ports are
        released."""
        if not self._ticker.is_alive() and self._ticker.ident is None:  # never started
            self.server.stop(0)
            if self.health is not None:
                self.health.server_close()
            return
        self.serving.clear()
        self.server.stop(grace_s).wait(grace_s)
        self._stopping.set()
        self._ticker.join(timeout=grace_s)
        self.verifier.drain()
        if self.health is not None:
            self.health.shutdown()
            self.health.server_close()
