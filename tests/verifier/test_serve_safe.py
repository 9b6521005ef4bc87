"""``groundplane-otel serve`` safe by default (issue 36), as an operator runs it (a real
process, real OTLP exporters): with no endpoint it exports nothing and writes its findings on
stderr; an endpoint that is its own address is refused; an unreachable Collector does not hold
the exit past a few seconds; addresses are checked up front with exact messages, and gRPC
core's own log lines never reach stderr."""

from __future__ import annotations

import re
import signal
import time

import pytest
from otlp_services import agent_request, service
from serve_process import POLICY, free_port, run_serve, start_serve

from groundplane_otel.cli import main

NOT_EXPORTING = (
    "groundplane-otel: not exporting (no OTEL_EXPORTER_OTLP_ENDPOINT): findings are written "
    "here, counts summarized at shutdown"
)
GRPC_CORE_LINE = re.compile(r"^[EWID]\d{4} \d\d:\d\d:\d\d", re.MULTILINE)
FINDING = re.compile(
    r"^groundplane-otel: finding: trace [0-9a-f]{32} span [0-9a-f]{16} boundary answer check "
    r"superlative\(fact='sales', field='winner'\): unsupported \(wrong_winner\) field winner$"
)


def send_answers(endpoint: str, *winners: str) -> None:
    agents, tools = service("agent-service", endpoint), service("sales-service", endpoint)
    for winner in winners:
        agent_request(agents, tools, winner)
    agents.shutdown()
    tools.shutdown()


def test_with_no_endpoint_it_exports_nothing_and_writes_each_finding_and_a_summary() -> None:
    """No ``OTEL_EXPORTER_OTLP_*``: the start-up lines say where it listens, the health
    address and that it does not export; at SIGTERM each buffered finding is written on
    stderr, then the summary; exit 0."""
    serving = start_serve("--root-wait", "600")
    assert serving.lines[1].startswith("groundplane-otel: health on http://127.0.0.1:")
    assert serving.lines[1].endswith("/healthz")
    assert serving.lines[2] == NOT_EXPORTING
    send_answers(serving.endpoint, "US", "EU", "US")
    serving.process.send_signal(signal.SIGTERM)
    code, err = serving.rest(timeout=10)
    assert code == 0
    lines = err.splitlines()
    assert lines[0] == "groundplane-otel: stopping: deciding every buffered trace, then flushing"
    assert [bool(FINDING.match(line)) for line in lines[1:3]] == [True, True], lines
    assert lines[3:] == [
        "groundplane-otel: verifier stopped: 3 traces decided (root_ended 3, idle 0, "
        "incomplete 0, failed 0)",
        "groundplane-otel:   outputs: answer flagged 2, answer passed 1",
        "groundplane-otel:   findings: 2 (written above, not exported)",
        "groundplane-otel:   spans: 12 received (0 dropped, 0 unreadable), 0 in oversize "
        "requests; requests: 12 received, 0 oversize, 0 unreadable",
    ]


@pytest.mark.parametrize(
    ("host", "variable", "endpoint"),
    [
        ("127.0.0.1", "OTEL_EXPORTER_OTLP_ENDPOINT", "http://localhost:{port}"),
        ("0.0.0.0", "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT", "127.0.0.1:{port}"),
    ],
)
def test_an_endpoint_that_is_its_own_address_is_refused(
    host: str, variable: str, endpoint: str
) -> None:
    """Exporting to the verifier's own listening address (its findings sent to itself,
    refused as UNIMPLEMENTED and lost) is a start-up error: exit 2, never "listening"."""
    port = free_port()
    target = endpoint.format(port=port)
    name = "metrics" if "METRICS" in variable else "metrics and logs"
    done = run_serve(
        "--listen", f"{host}:{port}", "--health", "127.0.0.1:0", env={variable: target}
    )
    assert done.returncode == 2
    assert done.stderr.splitlines() == [
        f"groundplane-otel: refusing to export {name} to {target}: that is the verifier's own "
        f"address ({host}:{port}), which cannot read them; set OTEL_EXPORTER_OTLP_ENDPOINT to "
        "your Collector or backend, or unset it (findings are then written on stderr)"
    ]


@pytest.mark.parametrize(
    ("variable", "endpoint", "problem"),
    [
        ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://[bad", "not a URL (Invalid IPv6 URL)"),
        (
            "OTEL_EXPORTER_OTLP_ENDPOINT",
            "http://localhost:x",
            "the port must be a whole number from 0 to 65535",
        ),
        (
            "OTEL_EXPORTER_OTLP_LOGS_ENDPOINT",
            "grpc://collector:4317",
            "the scheme must be http or https, got 'grpc'",
        ),
    ],
)
def test_a_malformed_endpoint_is_refused_at_start(
    variable: str, endpoint: str, problem: str
) -> None:
    done = run_serve("--listen", "127.0.0.1:0", "--health", "127.0.0.1:0", env={variable: endpoint})
    assert done.returncode == 2
    assert done.stderr.splitlines() == [f"groundplane-otel: {variable} {endpoint!r}: {problem}"]


def test_an_unreachable_collector_does_not_hold_the_exit() -> None:
    """The Collector is down (nothing listens on the endpoint): SIGTERM still exits 0 within
    5 s (the flush is bounded, retries given up), and the summary says the finding was not
    exported; no gRPC core log line on stderr."""
    endpoint = f"http://127.0.0.1:{free_port()}"
    serving = start_serve(
        "--root-wait", "0", env={"OTEL_EXPORTER_OTLP_ENDPOINT": endpoint}, lines=4
    )
    assert serving.lines[2:] == [
        f"groundplane-otel: exporting metrics over OTLP/gRPC to {endpoint}",
        f"groundplane-otel: exporting logs over OTLP/gRPC to {endpoint}",
    ]
    send_answers(serving.endpoint, "US")
    time.sleep(1.5)  # decided, and the log export is retrying
    began = time.monotonic()
    serving.process.send_signal(signal.SIGTERM)
    code, err = serving.rest(timeout=30)
    took = time.monotonic() - began
    assert code == 0
    assert took < 5.0, err
    lines = err.splitlines()
    assert "groundplane-otel:   findings: 1 (0 exported, 1 not exported)" in lines
    assert any(
        line.startswith("groundplane-otel:   metric exports: 0 succeeded, ") for line in lines
    )
    assert "Traceback" not in err
    assert not GRPC_CORE_LINE.search(err), err


@pytest.mark.parametrize(
    ("option", "value", "message"),
    [
        ("--listen", "127.0.0.1:notaport", "the port must be a whole number from 0 to 65535"),
        ("--listen", "127.0.0.1:70000", "the port must be a whole number from 0 to 65535"),
        ("--listen", "4317", "must be HOST:PORT (an IPv6 host in brackets: [::1]:4317)"),
        ("--health", "::1:13133", "must be HOST:PORT (an IPv6 host in brackets: [::1]:4317)"),
    ],
)
def test_a_malformed_address_is_a_usage_error(
    option: str, value: str, message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["serve", "--policy", POLICY, option, value])
    assert exited.value.code == 2
    assert capsys.readouterr().err.splitlines()[-1] == (
        f"groundplane-otel serve: error: argument {option}: {message}, got {value!r}"
    )


@pytest.mark.parametrize(
    ("listen", "message"),
    [
        (
            "203.0.113.9:4317",
            "cannot listen on '203.0.113.9:4317': no such address on this machine",
        ),
        ("nohost.invalid:4317", "cannot listen on 'nohost.invalid:4317': unknown host "),
    ],
)
def test_an_address_that_cannot_be_bound_says_why(listen: str, message: str) -> None:
    """Not "in use?" for every failure: the real cause, exit 2, and no gRPC core log line."""
    done = run_serve("--listen", listen, "--health", "127.0.0.1:0")
    assert done.returncode == 2
    assert len(done.stderr.splitlines()) == 1
    assert done.stderr.startswith(f"groundplane-otel: {message}")


def test_the_help_shows_the_address_defaults(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["serve", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "OTLP/gRPC address to listen on (default: 0.0.0.0:4317)" in text
    assert "address of GET /healthz (default: 0.0.0.0:13133)" in text


def test_metrics_alone_exported_leaves_the_findings_on_stderr() -> None:
    """Only ``OTEL_EXPORTER_OTLP_METRICS_ENDPOINT`` set: the metrics go there, the findings
    are written on stderr (never to the SDK's default endpoint)."""
    endpoint = f"http://127.0.0.1:{free_port()}"
    serving = start_serve(
        "--root-wait", "600", env={"OTEL_EXPORTER_OTLP_METRICS_ENDPOINT": endpoint}, lines=4
    )
    assert serving.lines[2:] == [
        f"groundplane-otel: exporting metrics over OTLP/gRPC to {endpoint}",
        "groundplane-otel: not exporting logs (no endpoint set for them): findings are written "
        "here",
    ]
    send_answers(serving.endpoint, "US")
    serving.process.send_signal(signal.SIGTERM)
    code, err = serving.rest(timeout=30)
    assert code == 0
    assert sum(bool(FINDING.match(line)) for line in err.splitlines()) == 1
    assert "groundplane-otel:   findings: 1 (written above, not exported)" in err.splitlines()
