"""``groundplane-otel serve`` as an operator runs it (a subprocess, the real OTLP exporters both
ways): SIGTERM with a poison trace buffered, a port already in use, bad values."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from otlp_services import agent_request, deep_chain, service
from otlp_sink import Sink

from groundplane_otel.cli import main

POLICY = str(Path(__file__).with_name("sales_policy.yaml"))


def serve(sink: Sink, *options: str) -> subprocess.Popen[str]:
    """The CLI serving on an ephemeral port, exporting to the sink."""
    env = {
        **os.environ,
        "OTEL_EXPORTER_OTLP_ENDPOINT": f"http://{sink.endpoint}",
        "OTEL_EXPORTER_OTLP_INSECURE": "true",
    }
    command = [sys.executable, "-m", "groundplane_otel.cli", "serve", "--policy", POLICY]
    command += ["--health", "127.0.0.1:0", *options]
    return subprocess.Popen(command, env=env, stderr=subprocess.PIPE, text=True)


def listening_port(process: subprocess.Popen[str]) -> int:
    assert process.stderr is not None
    line = process.stderr.readline()
    assert line.startswith("groundplane-otel: verifier listening on 127.0.0.1:"), line
    return int(line.split("127.0.0.1:")[1].split()[0])


@pytest.fixture
def running(sink: Sink) -> Iterator[subprocess.Popen[str]]:
    process = serve(sink, "--listen", "127.0.0.1:0", "--root-wait", "600")
    yield process
    if process.poll() is None:
        process.kill()
        process.wait(10)


def test_sigterm_with_a_poison_trace_buffered_flushes_every_finding_and_exits_0(
    sink: Sink, running: subprocess.Popen[str]
) -> None:
    """20 buffered wrong answers and a 1,500-deep leaf-first chain: SIGTERM drains without a
    traceback, exit 0, all 20 findings arrive as log records, and the summary says so."""
    endpoint = f"127.0.0.1:{listening_port(running)}"
    agents, tools = service("agent-service", endpoint), service("sales-service", endpoint)
    for _ in range(10):
        agent_request(agents, tools, "US")
    deep_chain(endpoint)
    for _ in range(10):
        agent_request(agents, tools, "US")
    running.send_signal(signal.SIGTERM)
    assert running.wait(30) == 0
    assert running.stderr is not None
    err = running.stderr.read()
    assert "Traceback" not in err
    lines = err.splitlines()
    assert "groundplane-otel:   findings: 20 (20 exported, 0 not exported)" in lines
    assert any(  # the last at shutdown, and one a minute before it
        line.startswith("groundplane-otel:   metric exports: ") and line.endswith(", 0 failed")
        for line in lines
    )
    with sink.lock:
        records = [log for log in sink.logs if log.event_name == "gen_ai.guardrail.result"]
    assert len(records) == 20
    agents.shutdown()
    tools.shutdown()


def test_a_second_serve_on_a_port_in_use_exits_2(
    sink: Sink, running: subprocess.Popen[str]
) -> None:
    """A second replica on a live verifier's port says why in one line (no gRPC core log
    line) and exits 2, never "listening"."""
    listen = f"127.0.0.1:{listening_port(running)}"
    second = serve(sink, "--listen", listen)
    _, stderr = second.communicate(timeout=30)
    assert second.returncode == 2
    assert stderr.splitlines() == [
        f"groundplane-otel: cannot listen on '{listen}': the address is in use (another "
        "process listens on it)"
    ]


@pytest.mark.parametrize(
    ("option", "value", "message"),
    [
        ("--root-wait", "nan", "must be a number >= 0, got 'nan'"),
        ("--decision-wait", "-1", "must be a number >= 0, got '-1'"),
        ("--root-wait", "inf", "must be a number >= 0, got 'inf'"),
        ("--max-receive-message-bytes", "0", "must be a whole number >= 1, got '0'"),
    ],
)
def test_bad_serve_values_are_usage_errors(
    option: str, value: str, message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """A NaN, infinite or negative wait and a non-positive size limit exit 2 with the reason."""
    with pytest.raises(SystemExit) as exited:
        main(["serve", "--policy", POLICY, option, value])
    assert exited.value.code == 2
    assert f"argument {option}: {message}" in capsys.readouterr().err
