"""A loopback OTLP/gRPC receiver for metrics and logs, built from ``opentelemetry-proto``: what
the fleet verifier exports arrives here as it would at a Collector."""

from __future__ import annotations

import threading
from concurrent import futures
from typing import Any

import grpc
from opentelemetry.proto.collector.logs.v1 import logs_service_pb2, logs_service_pb2_grpc
from opentelemetry.proto.collector.metrics.v1 import metrics_service_pb2, metrics_service_pb2_grpc

__all__ = ["Sink"]


class _Metrics(metrics_service_pb2_grpc.MetricsServiceServicer):
    def __init__(self, sink: Sink) -> None:
        self.sink = sink

    def Export(self, request: Any, context: Any) -> Any:  # noqa: N802 - gRPC method name
        with self.sink.lock:
            for resource_metrics in request.resource_metrics:
                for scope_metrics in resource_metrics.scope_metrics:
                    self.sink.metrics.extend(scope_metrics.metrics)
        return metrics_service_pb2.ExportMetricsServiceResponse()


class _Logs(logs_service_pb2_grpc.LogsServiceServicer):
    def __init__(self, sink: Sink) -> None:
        self.sink = sink

    def Export(self, request: Any, context: Any) -> Any:  # noqa: N802 - gRPC method name
        with self.sink.lock:
            for resource_logs in request.resource_logs:
                for scope_logs in resource_logs.scope_logs:
                    self.sink.logs.extend(scope_logs.log_records)
        return logs_service_pb2.ExportLogsServiceResponse()


class Sink:
    """Keeps every metric and log record it receives; listens on 127.0.0.1 only."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.metrics: list[Any] = []
        self.logs: list[Any] = []
        self.server = grpc.server(futures.ThreadPoolExecutor(max_workers=4))
        metrics_service_pb2_grpc.add_MetricsServiceServicer_to_server(_Metrics(self), self.server)
        logs_service_pb2_grpc.add_LogsServiceServicer_to_server(_Logs(self), self.server)
        self.port = self.server.add_insecure_port("127.0.0.1:0")
        self.server.start()

    @property
    def endpoint(self) -> str:
        return f"127.0.0.1:{self.port}"

    def sums(self, name: str) -> dict[tuple[tuple[str, str], ...], int]:
        """The latest cumulative value of each point of a sum metric, by its attributes."""
        found: dict[tuple[tuple[str, str], ...], int] = {}
        with self.lock:
            for metric in self.metrics:
                if metric.name != name:
                    continue
                for point in metric.sum.data_points:
                    key = tuple(sorted((kv.key, kv.value.string_value) for kv in point.attributes))
                    found[key] = int(point.as_int or point.as_double)
        return found

    def close(self) -> None:
        self.server.stop(0).wait(5)
