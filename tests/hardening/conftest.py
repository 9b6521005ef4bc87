"""Fixtures for the hardening tests: the guard tests' harness (reused from ``tests/otel``), and
loopback endpoints for the OTLP exporters — a closed port, a black hole, a slow TraceService and a
healthy trace + metrics receiver. Every endpoint listens on 127.0.0.1 only and stops at teardown."""

from __future__ import annotations

import socket
import sys
from collections.abc import Iterator
from concurrent import futures
from pathlib import Path

import grpc
import pytest
from opentelemetry.proto.collector.metrics.v1 import metrics_service_pb2_grpc
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2_grpc

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "otel"))

from loopback import BlackHole, Receiver, SlowTraceService  # noqa: E402
from otel_harness import Harness  # noqa: E402


@pytest.fixture
def otel() -> Iterator[Harness]:
    """A fresh harness (real SDK providers, in-memory exporter and reader), closed afterwards."""
    harness = Harness()
    yield harness
    harness.close()


@pytest.fixture
def closed_port() -> Iterator[int]:
    """A loopback port that refuses connections: bound, never listening (no race with reuse)."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    yield sock.getsockname()[1]
    sock.close()


@pytest.fixture
def black_hole() -> Iterator[BlackHole]:
    """A loopback TCP server that accepts and never answers (a hung collector)."""
    server = BlackHole()
    yield server
    server.close()


@pytest.fixture
def slow_service() -> Iterator[int]:
    """A gRPC TraceService on loopback that sleeps 0.4 s before answering; yields its port."""
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=2))
    trace_service_pb2_grpc.add_TraceServiceServicer_to_server(SlowTraceService(0.4), server)
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    yield port
    server.stop(grace=None)


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
