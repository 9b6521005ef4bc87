"""The real processes of the Collector tests: the project's Collector (build/otelcol-groundplane,
``make collector``) and ``groundplane-otel serve`` replicas, each on loopback ports chosen free
at run time, each stopped by its PID (SIGTERM, then SIGKILL) whatever the test did."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from concurrent import futures
from pathlib import Path
from typing import Any, TypeVar

import grpc
import yaml
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2, trace_service_pb2_grpc
from prometheus_server import free_port

T = TypeVar("T")

REPO = Path(__file__).resolve().parents[2]
BINARY = REPO / "build" / "otelcol-groundplane"
CONFIGS = REPO / "collector_config"
MANIFEST = CONFIGS / "builder-config.yaml"
SHIPPED = sorted(p for p in CONFIGS.glob("*.yaml") if p != MANIFEST)
POLICY = REPO / "tests" / "verifier" / "sales_policy.yaml"
READY = "Everything is ready. Begin running and processing data."


def binary() -> Path:
    """The built Collector; a missing binary fails the test with the command that builds it."""
    if not os.access(BINARY, os.X_OK):
        raise AssertionError(f"{BINARY} not built: run `make collector` (needs Go)")
    return BINARY


def wait_for(condition: Callable[[], T | None], timeout: float, what: str) -> T:
    """Poll ``condition`` every 50 ms until it returns a truthy value, which is returned."""
    deadline = time.monotonic() + timeout
    while True:
        result = condition()
        if result:
            return result
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout}s waiting for {what}")
        time.sleep(0.05)


def stop_pid(process: subprocess.Popen[Any], grace: float = 15.0) -> int:
    """SIGTERM by PID, SIGKILL after ``grace`` seconds; the exit code."""
    if process.poll() is None:
        os.kill(process.pid, signal.SIGTERM)
        try:
            process.wait(grace)
        except subprocess.TimeoutExpired:
            os.kill(process.pid, signal.SIGKILL)
            process.wait(10)
    return int(process.returncode)


def overlay(path: Path, document: Mapping[str, Any]) -> Path:
    """Write a config overlay the Collector merges over a shipped config (``--config`` twice)."""
    path.write_text(yaml.safe_dump(dict(document), sort_keys=False))
    return path


class Collector:
    """One Collector process: the shipped ``config`` merged with the test's ``overlays``.

    Every run gets its internal telemetry on a free loopback port (``telemetry_port``: the
    Collector's own ``otelcol_*`` metrics), never the default :8888.
    """

    def __init__(
        self, config: Path, overlays: Sequence[Path], env: Mapping[str, str], workdir: Path
    ) -> None:
        self.telemetry_port = free_port()
        workdir.mkdir(parents=True, exist_ok=True)
        telemetry = overlay(
            workdir / "telemetry.yaml",
            {
                "service": {
                    "telemetry": {
                        "metrics": {
                            "readers": [
                                {
                                    "pull": {
                                        "exporter": {
                                            "prometheus": {
                                                "host": "127.0.0.1",
                                                "port": self.telemetry_port,
                                            }
                                        }
                                    }
                                }
                            ]
                        }
                    }
                }
            },
        )
        self.command = [str(binary())]
        for part in (config, *overlays, telemetry):
            self.command += ["--config", f"file:{part}"]
        self.env = {**os.environ, **env}
        self.log = workdir / "collector.log"
        self.process: subprocess.Popen[bytes] | None = None

    def start(self, timeout: float = 30.0) -> Collector:
        """Start and wait for the Collector's "Everything is ready" line."""
        with self.log.open("ab") as out:
            start = out.tell()
            self.process = subprocess.Popen(
                self.command, env=self.env, stdout=out, stderr=subprocess.STDOUT
            )
        process = self.process

        def ready() -> bool:
            if process.poll() is not None:
                raise AssertionError(f"collector exited {process.returncode}:\n{self.tail()}")
            return READY in self.log.read_text(errors="replace")[start:]

        wait_for(ready, timeout, "the collector to be ready")
        return self

    def stop(self) -> int:
        return stop_pid(self.process) if self.process is not None else 0

    def tail(self, chars: int = 3000) -> str:
        return self.log.read_text(errors="replace")[-chars:]

    def internal_metric(self, name: str) -> float:
        """Sum of the Collector's own metric ``name`` over every label set (0 when absent)."""
        url = f"http://127.0.0.1:{self.telemetry_port}/metrics"
        with urllib.request.urlopen(url, timeout=5) as response:  # noqa: S310 - loopback
            text = response.read().decode()
        total = 0.0
        for line in text.splitlines():
            if line.startswith(name) and line[len(name) : len(name) + 1] in ("{", " "):
                total += float(line.rsplit(" ", 1)[1])
        return total


class Replica:
    """One ``groundplane-otel serve`` replica on a fixed loopback port, exporting its metrics
    and log records to ``sink_endpoint`` every 200 ms. Explicit ``--listen`` and ``--health``:
    the test never depends on the CLI's defaults. ``start`` again after ``kill`` is a restart on
    the same port."""

    def __init__(self, sink_endpoint: str, root_wait: float, workdir: Path) -> None:
        self.port, self.health_port = free_port(), free_port()
        workdir.mkdir(parents=True, exist_ok=True)
        self.log = workdir / f"serve-{self.port}.log"
        self.command = [
            sys.executable,
            "-m",
            "groundplane_otel.cli",
            "serve",
            "--policy",
            str(POLICY),
            "--listen",
            f"127.0.0.1:{self.port}",
            "--health",
            f"127.0.0.1:{self.health_port}",
            "--root-wait",
            str(root_wait),
        ]
        self.env = {
            **os.environ,
            "OTEL_EXPORTER_OTLP_ENDPOINT": f"http://{sink_endpoint}",
            "OTEL_EXPORTER_OTLP_INSECURE": "true",
            "OTEL_METRIC_EXPORT_INTERVAL": "200",
            "OTEL_BLRP_SCHEDULE_DELAY": "100",
        }
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def endpoint(self) -> str:
        return f"127.0.0.1:{self.port}"

    def start(self, timeout: float = 30.0) -> Replica:
        """Start and wait until /healthz answers 200."""
        with self.log.open("ab") as out:
            self.process = subprocess.Popen(
                self.command, env=self.env, stdout=out, stderr=subprocess.STDOUT
            )
        process = self.process

        def healthy() -> bool:
            if process.poll() is not None:
                raise AssertionError(f"serve exited {process.returncode}:\n{self.tail()}")
            url = f"http://127.0.0.1:{self.health_port}/healthz"
            try:
                with urllib.request.urlopen(url, timeout=1) as response:  # noqa: S310 - loopback
                    return bool(response.status == 200)
            except (urllib.error.URLError, OSError):
                return False

        wait_for(healthy, timeout, "the verifier replica to be healthy")
        return self

    def kill(self) -> None:
        """SIGKILL: no drain, what the replica buffered is gone."""
        assert self.process is not None
        os.kill(self.process.pid, signal.SIGKILL)
        self.process.wait(10)

    def stop(self) -> int:
        """SIGTERM: the replica decides every buffered trace, flushes, exits 0."""
        return stop_pid(self.process, grace=30.0) if self.process is not None else 0

    def tail(self, chars: int = 3000) -> str:
        return self.log.read_text(errors="replace")[-chars:]


class TraceSink(trace_service_pb2_grpc.TraceServiceServicer):
    """A loopback OTLP/gRPC trace backend (what Tempo is to the shipped configs): counts the
    spans it receives by trace id."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.spans: Counter[bytes] = Counter()
        self.server = grpc.server(futures.ThreadPoolExecutor(max_workers=4))
        trace_service_pb2_grpc.add_TraceServiceServicer_to_server(self, self.server)
        self.port = self.server.add_insecure_port("127.0.0.1:0")
        self.server.start()

    @property
    def endpoint(self) -> str:
        return f"127.0.0.1:{self.port}"

    def Export(self, request: Any, context: Any) -> Any:  # noqa: N802 - gRPC method name
        with self.lock:
            for resource_spans in request.resource_spans:
                for scope_spans in resource_spans.scope_spans:
                    for span in scope_spans.spans:
                        self.spans[span.trace_id] += 1
        return trace_service_pb2.ExportTraceServiceResponse()

    def close(self) -> None:
        self.server.stop(0).wait(5)
