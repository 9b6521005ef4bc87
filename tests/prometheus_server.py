"""Start a real Prometheus (the Debian binary) on loopback for tests, and talk to its HTTP API.

Stdlib only. The server gets a temporary config and TSDB under ``tmp_path``, a free port on
127.0.0.1, and is stopped by its PID (never by name).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable
from pathlib import Path
from types import TracebackType
from typing import Any, TypeVar

import yaml

T = TypeVar("T")


class PrometheusError(RuntimeError):
    """Prometheus is missing, did not start, or answered a query with an error."""


def find_prometheus() -> str:
    """Path of the prometheus binary; fails with the install command when it is missing."""
    path = shutil.which("prometheus") or (
        "/usr/bin/prometheus" if os.access("/usr/bin/prometheus", os.X_OK) else None
    )
    if path is None:
        raise PrometheusError(
            "prometheus binary not found: apt-get install -y prometheus (Debian package)"
        )
    return path


def free_port() -> int:
    """A TCP port on 127.0.0.1 that was free a moment ago."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class PrometheusServer:
    """A running Prometheus process and a small client for its HTTP API."""

    def __init__(self, process: subprocess.Popen[bytes], url: str, log: Path) -> None:
        self.process = process
        self.pid = process.pid
        self.url = url
        self.log = log

    # HTTP API -------------------------------------------------------------------------------
    def _get(self, path: str, params: dict[str, str] | None = None) -> Any:
        query = f"?{urllib.parse.urlencode(params)}" if params else ""
        try:
            with urllib.request.urlopen(f"{self.url}{path}{query}", timeout=10) as resp:
                body = json.loads(resp.read())
        except urllib.error.HTTPError as err:  # 4xx/5xx still carry a JSON error body
            body = json.loads(err.read() or b"{}")
        if body.get("status") != "success":
            raise PrometheusError(f"{path} {params}: {body.get('errorType')}: {body.get('error')}")
        return body["data"]

    def query(self, expr: str, time_: float | None = None) -> list[dict[str, Any]]:
        """Instant query; returns the result list (vector) or a one-item list (scalar)."""
        params = {"query": expr}
        if time_ is not None:
            params["time"] = str(time_)
        data = self._get("/api/v1/query", params)
        if data["resultType"] in ("scalar", "string"):
            return [{"metric": {}, "value": data["result"]}]
        return list(data["result"])

    def query_range(
        self, expr: str, start: float, end: float, step: str = "1s"
    ) -> list[dict[str, Any]]:
        """Range query between two Unix timestamps."""
        params = {"query": expr, "start": str(start), "end": str(end), "step": step}
        return list(self._get("/api/v1/query_range", params)["result"])

    def alerts(self) -> list[dict[str, Any]]:
        """Active (pending or firing) alerts."""
        return list(self._get("/api/v1/alerts")["alerts"])

    def rules(self) -> list[dict[str, Any]]:
        """Rule groups as reported by /api/v1/rules (each with its rules, health, lastError)."""
        return list(self._get("/api/v1/rules")["groups"])

    def targets(self) -> list[dict[str, Any]]:
        """Active scrape targets (health, lastError)."""
        return list(self._get("/api/v1/targets")["activeTargets"])

    def wait_for(
        self, predicate: Callable[[], T | None], timeout: float = 30.0, interval: float = 0.25
    ) -> T:
        """Poll ``predicate`` until it returns a truthy value, which is returned."""
        deadline = time.monotonic() + timeout
        last_error: Exception | None = None
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise PrometheusError(f"prometheus exited: {self.log.read_text()[-2000:]}")
            try:
                result = predicate()
            except (PrometheusError, OSError) as err:
                last_error, result = err, None
            if result:
                return result
            time.sleep(interval)
        raise TimeoutError(f"condition not met within {timeout}s (last error: {last_error})")

    # lifecycle --------------------------------------------------------------------------------
    def stop(self) -> None:
        """Terminate the process by its PID, then kill it if it does not exit."""
        if self.process.poll() is None:
            os.kill(self.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.kill(self.pid, signal.SIGKILL)
                self.process.wait(timeout=10)

    def __enter__(self) -> PrometheusServer:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()


def write_config(
    path: Path,
    scrape_targets: list[str],
    rule_files: list[Path] | None,
    scrape_interval: str,
    evaluation_interval: str,
    honor_labels: bool = False,
) -> None:
    """Write a Prometheus config scraping ``scrape_targets`` (host:port) as job ``app``;
    ``honor_labels`` keeps the target's own ``job``/``instance`` (a Collector's exporter)."""
    config: dict[str, Any] = {
        "global": {
            "scrape_interval": scrape_interval,
            "evaluation_interval": evaluation_interval,
        },
        "scrape_configs": [
            {
                "job_name": "app",
                "scrape_interval": scrape_interval,
                "honor_labels": honor_labels,
                "static_configs": [{"targets": list(scrape_targets)}],
            }
        ],
    }
    if rule_files:
        config["rule_files"] = [str(Path(p).resolve()) for p in rule_files]
    path.write_text(yaml.safe_dump(config, sort_keys=False))


def start_prometheus(
    tmp_path: Path,
    scrape_targets: list[str],
    rule_files: list[Path] | None = None,
    scrape_interval: str = "1s",
    evaluation_interval: str = "1s",
    ready_timeout: float = 30.0,
    honor_labels: bool = False,
) -> PrometheusServer:
    """Start Prometheus on 127.0.0.1 with a temporary config and TSDB; return once it is ready."""
    binary = find_prometheus()
    workdir = tmp_path / "prometheus"
    workdir.mkdir(parents=True, exist_ok=True)
    config = workdir / "prometheus.yml"
    write_config(
        config, scrape_targets, rule_files, scrape_interval, evaluation_interval, honor_labels
    )
    port = free_port()
    log = workdir / "prometheus.log"
    with log.open("wb") as out:
        process = subprocess.Popen(
            [
                binary,
                f"--config.file={config}",
                f"--storage.tsdb.path={workdir / 'data'}",
                f"--web.listen-address=127.0.0.1:{port}",
                "--web.enable-lifecycle",
                "--enable-feature=exemplar-storage",
                "--log.level=warn",
            ],
            stdout=out,
            stderr=subprocess.STDOUT,
            cwd=workdir,
        )
    server = PrometheusServer(process, f"http://127.0.0.1:{port}", log)

    def ready() -> bool:
        with urllib.request.urlopen(f"{server.url}/-/ready", timeout=2) as resp:
            return bool(resp.status == 200)

    try:
        server.wait_for(ready, timeout=ready_timeout)
    except BaseException:
        server.stop()
        raise
    return server
