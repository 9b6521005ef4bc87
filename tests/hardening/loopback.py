"""Loopback OTLP endpoints for the fault tests: a black hole, a slow TraceService and a healthy
trace + metrics receiver. They listen on 127.0.0.1 only; the fixtures in conftest.py start and
stop them."""

from __future__ import annotations

import socket
import threading
import time
from typing import Any

from opentelemetry.proto.collector.metrics.v1 import metrics_service_pb2, metrics_service_pb2_grpc
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2, trace_service_pb2_grpc
from opentelemetry.proto.metrics.v1 import metrics_pb2
from opentelemetry.proto.trace.v1 import trace_pb2

__all__ = ["BlackHole", "Receiver", "SlowTraceService"]


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
