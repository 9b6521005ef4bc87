"""Fixtures for the hardening tests: the guard tests' harness (reused from ``tests/otel``), and
loopback endpoints for the OTLP exporters — a closed port, a black hole, a slow TraceService and a
healthy trace + metrics receiver. Every endpoint listens on 127.0.0.1 only and stops at teardown."""

from __future__ import annotations

import socket
import sys
import threading
import time
from collections.abc import Iterator
from concurrent import futures
from pathlib import Path
from typing import Any

import grpc
import pytest
from opentelemetry.proto.collector.metrics.v1 import metrics_service_pb2, metrics_service_pb2_grpc
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2, trace_service_pb2_grpc
from opentelemetry.proto.metrics.v1 import metrics_pb2
from opentelemetry.proto.trace.v1 import trace_pb2
from opentelemetry.sdk.trace import SpanLimits

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "otel"))

from otel_harness import Harness  # noqa: E402


@pytest.fixture
def otel() -> Iterator[Harness]:
    """A fresh harness (real SDK providers, in-memory exporter and reader), closed afterwards."""
    harness = Harness()
    yield harness
    harness.close()


@pytest.fixture
def make_otel() -> Iterator[Any]:
    """Factory for harnesses with custom span limits (closed at teardown)."""
    made: list[Harness] = []

    def make(span_limits: SpanLimits | None = None) -> Harness:
        harness = Harness(span_limits)
        made.append(harness)
        return harness

    yield make
    for harness in made:
        harness.close()


@pytest.fixture
def closed_port() -> Iterator[int]:
    """A loopback port that refuses connections: bound, never listening (no race with reuse)."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    yield sock.getsockname()[1]
    sock.close()


class BlackHole:
    """A loopback TCP server that accepts every connection and never reads or answers."""

    def __init__(self) -> None:
        self.listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen(64)
        self.listener.settimeout(0.2)
        self.port: int = self.listener.getsockname()[1]
        self.connections: list[socket.socket] = []
        self.stopping = threading.Event()
        self.thread = threading.Thread(target=self._accept, name="black-hole", daemon=True)
        self.thread.start()

    def _accept(self) -> None:
        while not self.stopping.is_set():
            try:
                connection, _ = self.listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            self.connections.append(connection)

    def close(self) -> None:
        self.stopping.set()
        self.thread.join(timeout=5)
        for connection in self.connections:
            connection.close()
        self.listener.close()


@pytest.fixture
def black_hole() -> Iterator[BlackHole]:
    server = BlackHole()
    yield server
    server.close()


class SlowTraceService(trace_service_pb2_grpc.TraceServiceServicer):
    """Answers every export, but only after ``delay`` seconds."""

    def __init__(self, delay: float) -> None:
        self.delay = delay
        self.requests = 0

    def Export(  # noqa: N802 - the generated gRPC method name
        self, request: trace_service_pb2.ExportTraceServiceRequest, context: Any
    ) -> trace_service_pb2.ExportTraceServiceResponse:
        self.requests += 1
        time.sleep(self.delay)
        return trace_service_pb2.ExportTraceServiceResponse()


@pytest.fixture
def slow_service() -> Iterator[int]:
    """A gRPC TraceService on loopback that sleeps 0.4 s before answering; yields its port."""
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=2))
    trace_service_pb2_grpc.add_TraceServiceServicer_to_server(SlowTraceService(0.4), server)
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    yield port
    server.stop(grace=None)


class Receiver(
    trace_service_pb2_grpc.TraceServiceServicer, metrics_service_pb2_grpc.MetricsServiceServicer
):
    """A healthy OTLP/gRPC collector stand-in: keeps every span and metric it receives."""

    def __init__(self) -> None:
        self.spans: list[trace_pb2.Span] = []
        self.metrics: list[metrics_pb2.Metric] = []
        self.lock = threading.Lock()
        self.port = 0

    def Export(  # noqa: N802 - the generated gRPC method name (both services use it)
        self, request: Any, context: Any
    ) -> Any:
        with self.lock:
            if isinstance(request, trace_service_pb2.ExportTraceServiceRequest):
                for resource_spans in request.resource_spans:
                    for scope_spans in resource_spans.scope_spans:
                        self.spans.extend(scope_spans.spans)
                return trace_service_pb2.ExportTraceServiceResponse()
            for resource_metrics in request.resource_metrics:
                for scope_metrics in resource_metrics.scope_metrics:
                    self.metrics.extend(scope_metrics.metrics)
            return metrics_service_pb2.ExportMetricsServiceResponse()


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    """A gRPC TraceService + MetricsService on a free loopback port."""
    servicer = Receiver()
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=2))
    trace_service_pb2_grpc.add_TraceServiceServicer_to_server(servicer, server)
    metrics_service_pb2_grpc.add_MetricsServiceServicer_to_server(servicer, server)
    servicer.port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    yield servicer
    server.stop(grace=None)
