"""The fleet verifier: an OTLP/gRPC trace receiver that checks whole traces after the fact.

Agents whose tools run in another service (an MCP server, a retrieval or SQL service) cannot be
guarded in process: only something that sees the whole trace can check the answer. The verifier
receives spans from every service (behind the Collector's ``load_balancing`` exporter, routed by
trace id, so each replica gets whole traces), assembles them in a bounded buffer (``Replayer``:
max traces, max spans per trace, a decision wait in seconds since a trace's last span — every
drop counted) and runs the policy through the guard's own processor, **observe only** (it sees
answers after they reached the user: it never claims a block). From the engine's results it
exports the same ``groundplane.*`` metrics with ``groundplane.mode="verifier"``, one
``gen_ai.guardrail.result`` log record per finding carrying the guarded span's trace and span
ids, and its own intake counters. ``/healthz`` answers 200 while serving and 503 while
draining; ``stop()`` drains (decides every buffered trace), then flushes.
"""

from __future__ import annotations

import dataclasses
import threading
import time
from collections.abc import Iterator
from concurrent import futures
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import grpc  # type: ignore[import-untyped]
from opentelemetry.metrics import CallbackOptions, MeterProvider, Observation
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2, trace_service_pb2_grpc

from groundplane_otel.otel import semconv as sc
from groundplane_otel.otel.config import GuardConfig
from groundplane_otel.otel.replay import Replayer

__all__ = ["MODE_VERIFIER", "Verifier", "VerifierServer", "observe_only"]

MODE_VERIFIER = "verifier"


def observe_only(config: GuardConfig) -> GuardConfig:
    """The policy with every boundary in observe mode (the verifier never raises)."""
    boundaries = tuple(dataclasses.replace(spec, mode="observe") for spec in config.boundaries)
    return dataclasses.replace(config, mode="observe", boundaries=boundaries)


class Verifier(trace_service_pb2_grpc.TraceServiceServicer):
    """The receiving end: every export is fed to one ``Replayer`` under a lock."""

    def __init__(
        self,
        config: GuardConfig,
        *,
        meter_provider: MeterProvider,
        logger_provider: Any = None,
        decision_wait_s: float = 5.0,
        max_traces: int = 10_000,
        max_spans_per_trace: int = 10_000,
    ) -> None:
        self.replayer = Replayer(
            observe_only(config),
            decision_wait=decision_wait_s,
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

    def Export(
        self, request: trace_service_pb2.ExportTraceServiceRequest, context: Any
    ) -> trace_service_pb2.ExportTraceServiceResponse:
        with self.lock:
            self.replayer.feed(request)
        return trace_service_pb2.ExportTraceServiceResponse()

    def tick(self) -> int:
        """Decide the traces whose wait has passed."""
        with self.lock:
            return self.replayer.decide_ready()

    def drain(self) -> None:
        """Decide every buffered trace now (shutdown)."""
        with self.lock:
            self.replayer.finish()

    def _observe_spans(self, options: CallbackOptions) -> Iterator[Observation]:
        stats = self.replayer.stats
        yield Observation(stats.spans, {sc.VERIFIER_OUTCOME: "received"})
        yield Observation(stats.dropped_spans, {sc.VERIFIER_OUTCOME: "dropped"})

    def _observe_traces(self, options: CallbackOptions) -> Iterator[Observation]:
        stats = self.replayer.stats
        yield Observation(stats.traces - stats.incomplete_traces, {sc.VERIFIER_OUTCOME: "decided"})
        yield Observation(stats.incomplete_traces, {sc.VERIFIER_OUTCOME: "incomplete"})


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


class VerifierServer:
    """The gRPC server, the decision ticker and the health endpoint around a ``Verifier``."""

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
        self.server = grpc.server(futures.ThreadPoolExecutor(max_workers=workers))
        trace_service_pb2_grpc.add_TraceServiceServicer_to_server(  # type: ignore[no-untyped-call]
            verifier, self.server
        )
        self.port = self.server.add_insecure_port(listen)
        if self.port == 0:
            raise ValueError(f"cannot listen on {listen!r}")
        self.serving = threading.Event()
        self._stopping = threading.Event()
        self._tick_s = tick_s
        self._ticker = threading.Thread(target=self._tick, name="verifier-ticker", daemon=True)
        self.health: ThreadingHTTPServer | None = None
        if health is not None:
            host, _, port = health.rpartition(":")
            self.health = ThreadingHTTPServer((host or "127.0.0.1", int(port)), _Health)
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
            self.verifier.tick()

    def stop(self, grace_s: float = 5.0) -> None:
        """Graceful: refuse new exports, finish those in flight, decide every buffered trace;
        the caller then flushes its meter and logger providers."""
        self.serving.clear()
        self.server.stop(grace_s).wait(grace_s)
        self._stopping.set()
        self._ticker.join(timeout=grace_s)
        self.verifier.drain()
        if self.health is not None:
            self.health.shutdown()
            self.health.server_close()
