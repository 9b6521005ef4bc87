"""Zero-code setup: `opentelemetry-instrument` + GROUNDPLANE_POLICY guards an app that never
imports the guard; disabling by name, a missing policy, an invalid policy and a missing SDK
provider each behave as documented."""

from __future__ import annotations

import hashlib
import json
import logging
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from opentelemetry import trace
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.sdk.trace.sampling import ALWAYS_ON

from groundplane_otel.errors import UnsupportedClaim
from groundplane_otel.otel import install
from groundplane_otel.otel.instrumentor import GroundplaneInstrumentor
from groundplane_otel.otel.policy import load_policy

ROOT = Path(__file__).resolve().parents[2]
POLICY = ROOT / "examples" / "policy.yaml"
APP = Path(__file__).resolve().parent / "apps" / "campaign_app.py"
INSTRUMENT = Path(sys.executable).parent / "opentelemetry-instrument"
WRONG_WINNER = (
    "APP: UnsupportedClaim: unsupported claim in field 'winner': model said 'north', "
    "registered facts support 'harbour' | fact='campaign_ctr' | "
    "provenance=warehouse.query(table='campaign_daily', window='7d') | "
    "computed argmax on 'ctr' is 'harbour' (0.0455); 'north' ranked #2 at 0.0412"
)
SAMPLER_WARNING = (
    "groundplane: the tracer provider's sampler is the SDK default, ParentBased(AlwaysOn): it "
    "drops every span of a request whose incoming traceparent says not sampled (an upstream "
    "service sampled it out), and the guard never sees a dropped span (its output goes "
    "unchecked and uncounted). Wrap it: TracerProvider(sampler=GuardSampler(ParentBased("
    "ALWAYS_ON))), or set OTEL_TRACES_SAMPLER=groundplane_parentbased_traceidratio; every span "
    "is then recorded for the guard and only the sampled ones are exported"
)
AGENT = {"gen_ai.agent.name": "campaign-analyst"}  # examples/policy.yaml's match
POLICY_VERSION = f"1+sha256:{hashlib.sha256(POLICY.read_bytes()).hexdigest()[:12]}"
CHECKED_WRONG = (  # (check family, verdict) of the policy's checks on the wrong answer
    ("superlative", "unsupported"),
    ("ranking_prefix", "supported"),
    ("aggregate_reconciles", "supported"),
)
NO_POLICY_WARNING = (
    "groundplane: GROUNDPLANE_POLICY is not set, so no guard is installed and no output is "
    "checked. Set GROUNDPLANE_POLICY=/path/to/policy.yaml, or silence this with "
    "OTEL_PYTHON_DISABLED_INSTRUMENTATIONS=groundplane"
)


def run_app(tmp_path: Path, which: str, **env: str) -> subprocess.CompletedProcess[str]:
    """Run the app under opentelemetry-instrument with console exporters and a clean env."""
    clean = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("OTEL_", "GROUNDPLANE_"))
    }
    command = [str(INSTRUMENT), "--traces_exporter", "console", "--metrics_exporter", "console"]
    command += ["--logs_exporter", "none", sys.executable, str(APP), which]
    # The openai instrumentors are installed too; they only slow the start-up down here.
    clean["OTEL_PYTHON_DISABLED_INSTRUMENTATIONS"] = "openai"
    # This checkout's package, not whichever copy the interpreter has installed.
    clean["PYTHONPATH"] = os.pathsep.join(filter(None, (str(ROOT), clean.get("PYTHONPATH"))))
    return subprocess.run(
        command,
        cwd=tmp_path,
        env={**clean, **env},
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )


def json_objects(text: str) -> Iterator[dict[str, Any]]:
    """The JSON documents the console exporters print one after another."""
    decoder, position = json.JSONDecoder(), text.find("{")
    while position != -1:
        document, end = decoder.raw_decode(text, position)
        yield document
        position = text.find("{", end)


def spans(text: str) -> dict[str, dict[str, Any]]:
    return {doc["name"]: doc for doc in json_objects(text) if "context" in doc}


def points(text: str, metric: str) -> list[tuple[dict[str, Any], Any]]:
    """(attributes, value) of every data point of ``metric`` in the console metrics output."""
    found = []
    for doc in json_objects(text):
        for resource in doc.get("resource_metrics", []):
            for scope in resource["scope_metrics"]:
                for entry in scope["metrics"]:
                    if entry["name"] == metric:
                        found += [
                            (p["attributes"], p["value"]) for p in entry["data"]["data_points"]
                        ]
    return found


def test_wrong_winner_raises_in_the_app_and_the_exported_span_carries_the_event(
    tmp_path: Path,
) -> None:
    """With GROUNDPLANE_POLICY set, the app gets UnsupportedClaim, the console-exported chat span
    is ERROR with the guardrail event linking the tool span, and the claim is counted."""
    result = run_app(tmp_path, "wrong", GROUNDPLANE_POLICY=str(POLICY))
    assert result.stdout.splitlines()[0] == WRONG_WINNER
    exported = spans(result.stdout)
    chat, tool = exported["chat scripted-model"], exported["execute_tool warehouse.query"]
    assert chat["status"]["status_code"] == "ERROR"
    assert chat["attributes"]["groundplane.outcome"] == "blocked"
    event, *evaluated = chat["events"]
    assert event["name"] == "gen_ai.guardrail.result"
    assert [(e["name"], e["attributes"]) for e in evaluated] == [
        (
            "gen_ai.evaluation.result",
            {"gen_ai.evaluation.name": check, "gen_ai.evaluation.score.label": verdict},
        )
        for check, verdict in CHECKED_WRONG
    ]
    contract = {key: event["attributes"].get(key) for key in CONTRACT}
    assert contract == {
        "gen_ai.guardrail.component.name": "groundplane",
        "gen_ai.guardrail.policy.id": "campaign_report",
        "gen_ai.guardrail.policy.version": POLICY_VERSION,
        "gen_ai.guardrail.policy.rule.id": "superlative(fact='campaign_ctr', field='winner')",
        "gen_ai.guardrail.result.type": "verdict",
        "gen_ai.guardrail.result.value": "unsupported",
        "gen_ai.guardrail.source": "model_response",
        "groundplane.check": "superlative",
        "groundplane.field": "winner",
        "groundplane.fact": "campaign_ctr",
        "groundplane.fact.tool": "warehouse.query",
        "groundplane.fact.trace_id": tool["context"]["trace_id"].removeprefix("0x"),
        "groundplane.fact.span_id": tool["context"]["span_id"].removeprefix("0x"),
    }
    labels = {"groundplane.boundary": "campaign_report", "groundplane.mode": "enforce", **AGENT}
    assert points(result.stdout, "groundplane.claims") == [  # every check, report mode "first"
        ({"groundplane.check": check, "groundplane.verdict": verdict, **labels}, 1)
        for check, verdict in CHECKED_WRONG
    ]
    assert result.stderr.splitlines() == [SAMPLER_WARNING]


CONTRACT = (
    "gen_ai.guardrail.component.name",
    "gen_ai.guardrail.policy.id",
    "gen_ai.guardrail.policy.version",
    "gen_ai.guardrail.policy.rule.id",
    "gen_ai.guardrail.result.type",
    "gen_ai.guardrail.result.value",
    "gen_ai.guardrail.source",
    "groundplane.check",
    "groundplane.field",
    "groundplane.fact",
    "groundplane.fact.tool",
    "groundplane.fact.trace_id",
    "groundplane.fact.span_id",
)


def test_right_answer_passes_and_is_counted(tmp_path: Path) -> None:
    """The correct answer reaches the app, the span stays OK and the output counts as passed."""
    result = run_app(tmp_path, "right", GROUNDPLANE_POLICY=str(POLICY))
    assert result.stdout.splitlines()[0] == "APP: answer accepted"
    chat = spans(result.stdout)["chat scripted-model"]
    assert chat["status"]["status_code"] == "UNSET"
    assert [(e["name"], e["attributes"]) for e in chat["events"]] == [
        (
            "gen_ai.evaluation.result",
            {"gen_ai.evaluation.name": check, "gen_ai.evaluation.score.label": "supported"},
        )
        for check, _ in CHECKED_WRONG
    ]
    assert chat["attributes"]["groundplane.outcome"] == "passed"
    assert points(result.stdout, "groundplane.outputs") == [
        (
            {
                "groundplane.boundary": "campaign_report",
                "groundplane.outcome": "passed",
                "groundplane.mode": "enforce",
                **AGENT,
            },
            1,
        )
    ]


def test_disabled_by_name_checks_nothing(tmp_path: Path) -> None:
    """OTEL_PYTHON_DISABLED_INSTRUMENTATIONS=groundplane: the wrong answer goes through unseen."""
    result = run_app(
        tmp_path,
        "wrong",
        GROUNDPLANE_POLICY=str(POLICY),
        OTEL_PYTHON_DISABLED_INSTRUMENTATIONS="openai,groundplane",
    )
    assert result.stdout.splitlines()[0] == "APP: answer accepted"
    chat = spans(result.stdout)["chat scripted-model"]
    assert chat["events"] == []
    assert not any(key.startswith("groundplane.") for key in chat["attributes"])
    assert points(result.stdout, "groundplane.claims") == []


def test_no_policy_warns_once_on_stderr(tmp_path: Path) -> None:
    """Without GROUNDPLANE_POLICY the app runs unguarded and stderr says why and how to fix it."""
    result = run_app(tmp_path, "wrong")
    assert result.stdout.splitlines()[0] == "APP: answer accepted"
    assert result.stderr.splitlines() == [NO_POLICY_WARNING]


def test_invalid_policy_logs_the_located_error_and_installs_nothing(tmp_path: Path) -> None:
    """A broken policy is an ERROR naming file, line, key path and fix; the app keeps running."""
    bad = tmp_path / "bad.yaml"
    bad.write_text(POLICY.read_text().replace("kind: table", "kind: tabel"))
    result = run_app(tmp_path, "wrong", GROUNDPLANE_POLICY=str(bad))
    assert result.stdout.splitlines()[0] == "APP: answer accepted"
    assert result.stderr.splitlines() == [
        "groundplane: invalid policy, the guard is NOT installed and the app runs UNGUARDED (no "
        "output is checked; set GROUNDPLANE_STRICT=true to stop at start-up instead): "
        f"{bad}:25: facts.campaign_ctr.kind: expected one of ranking, table, domain, value, "
        "documents, got 'tabel'. Fix: did you mean 'table'?"
    ]


def test_sampler_entry_point_at_ratio_zero_checks_everything_and_exports_nothing(
    tmp_path: Path,
) -> None:
    """OTEL_TRACES_SAMPLER=groundplane_parentbased_traceidratio with ratio 0: no span is
    exported, yet the wrong answer still raises and its three checks are counted."""
    result = run_app(
        tmp_path,
        "wrong",
        GROUNDPLANE_POLICY=str(POLICY),
        OTEL_TRACES_SAMPLER="groundplane_parentbased_traceidratio",
        OTEL_TRACES_SAMPLER_ARG="0",
    )
    assert result.stdout.splitlines()[0] == WRONG_WINNER
    assert spans(result.stdout) == {}
    assert [value for _, value in points(result.stdout, "groundplane.claims")] == [1, 1, 1]
    assert result.stderr == ""  # GuardSampler: no sampler warning


@pytest.fixture
def instrumentor() -> Iterator[GroundplaneInstrumentor]:
    """The (singleton) instrumentor, always uninstrumented afterwards."""
    instance = GroundplaneInstrumentor()
    yield instance
    if instance.is_instrumented_by_opentelemetry:
        instance.uninstrument()


def test_no_sdk_tracer_provider_warns_and_installs_nothing(
    instrumentor: GroundplaneInstrumentor,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """An API-only tracer provider cannot show spans to a processor: warn, install nothing."""
    monkeypatch.setenv("GROUNDPLANE_POLICY", str(POLICY))
    with caplog.at_level(logging.WARNING, logger="groundplane_otel"):
        instrumentor.instrument(tracer_provider=trace.NoOpTracerProvider())
    assert instrumentor.guard is None
    assert caplog.messages == [
        "groundplane: no OpenTelemetry SDK tracer provider is configured (found "
        f"NoOpTracerProvider), so the guard from {POLICY} cannot see any span and is not "
        "installed. Run the app under opentelemetry-instrument with opentelemetry-distro "
        "installed, or call trace.set_tracer_provider(TracerProvider()) before instrumenting"
    ]


def test_instrument_uses_given_providers_and_uninstrument_switches_off(
    instrumentor: GroundplaneInstrumentor, monkeypatch: pytest.MonkeyPatch
) -> None:
    """instrument(tracer_provider=, meter_provider=) guards those providers, with GROUNDPLANE_MODE
    applied; uninstrument() leaves the same spans unchecked."""
    monkeypatch.setenv("GROUNDPLANE_POLICY", str(POLICY))
    monkeypatch.setenv("GROUNDPLANE_MODE", "observe")
    provider, exporter = TracerProvider(), InMemorySpanExporter()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    reader = InMemoryMetricReader()
    instrumentor.instrument(
        tracer_provider=provider, meter_provider=MeterProvider(metric_readers=[reader])
    )
    assert instrumentor.guard is not None
    assert instrumentor.guard.config.mode == "observe"
    guard = instrumentor.guard
    instrumentor.uninstrument()
    assert (instrumentor.guard, guard.active) == (None, False)


SECOND_GUARD = (
    "groundplane_otel: a guard is already installed on this TracerProvider (by {origin}); a "
    "second one would check and count every output twice. Keep one: call uninstall() on the "
    "first, put every boundary in one config, or under opentelemetry-instrument set "
    "OTEL_PYTHON_DISABLED_INSTRUMENTATIONS=groundplane to install in code only"
)


def guarded_wrong_winner(provider: TracerProvider) -> tuple[str | None, int]:
    """The campaign app's wrong-winner trace (tests/otel/apps/campaign_app.py) on ``provider``:
    the app's exception code (None: nothing raised) and the chat span's guardrail events."""
    tracer = provider.get_tracer("app")
    rows = [
        {"campaign": "harbour", "clicks": 910, "ctr": 0.0455},
        {"campaign": "north", "clicks": 824, "ctr": 0.0412},
        {"campaign": "delta", "clicks": 602, "ctr": 0.0301},
    ]
    top3 = ["harbour", "north", "delta"]
    wrong = {"winner": "north", "ctr": 0.0412, "top3": top3, "total_clicks": 2336}
    message = {"role": "assistant", "parts": [{"type": "text", "content": json.dumps(wrong)}]}
    agent = {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "campaign-analyst"}
    tool = {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": "warehouse.query",
        "gen_ai.tool.call.arguments": json.dumps({"table": "campaign_daily", "window": "7d"}),
        "gen_ai.tool.call.result": json.dumps({"rows": rows}),
    }
    code: str | None = None
    chat: Any = None
    try:
        with tracer.start_as_current_span("invoke_agent campaign-analyst", attributes=agent):
            with tracer.start_as_current_span("execute_tool warehouse.query", attributes=tool):
                pass
            with tracer.start_as_current_span(
                "chat scripted-model", attributes={"gen_ai.operation.name": "chat"}
            ) as chat:
                chat.set_attribute("gen_ai.output.messages", json.dumps([message]))
    except UnsupportedClaim as exc:
        code = exc.code
    return code, sum(1 for event in chat.events if event.name == "gen_ai.guardrail.result")


def test_install_in_code_under_the_zero_code_guard_is_refused(
    instrumentor: GroundplaneInstrumentor, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Zero-code first, then an explicit install() on the same provider: a RuntimeError naming
    the zero-code guard; the zero-code guard alone checks, counts once and raises once."""
    monkeypatch.setenv("GROUNDPLANE_POLICY", str(POLICY))
    provider, reader = TracerProvider(sampler=ALWAYS_ON), InMemoryMetricReader()
    meter_provider = MeterProvider(metric_readers=[reader])
    instrumentor.instrument(tracer_provider=provider, meter_provider=meter_provider)
    assert instrumentor.guard is not None
    with pytest.raises(RuntimeError) as refused:
        install(instrumentor.guard.config, tracer_provider=provider, meter_provider=meter_provider)
    origin = f"opentelemetry-instrument (GROUNDPLANE_POLICY={POLICY})"
    assert str(refused.value) == SECOND_GUARD.format(origin=origin)
    assert guarded_wrong_winner(provider) == ("wrong_winner", 1)
    assert outputs(reader) == {("enforce", "blocked"): 1}


def test_the_zero_code_guard_is_not_installed_over_one_installed_in_code(
    instrumentor: GroundplaneInstrumentor,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """install() first, then the instrumentor on the same provider: it logs an ERROR and
    installs nothing; the guard installed in code alone checks, counts once and raises once."""
    monkeypatch.setenv("GROUNDPLANE_POLICY", str(POLICY))
    provider, reader = TracerProvider(sampler=ALWAYS_ON), InMemoryMetricReader()
    meter_provider = MeterProvider(metric_readers=[reader])
    guard = install(
        load_policy(str(POLICY)), tracer_provider=provider, meter_provider=meter_provider
    )
    try:
        with caplog.at_level(logging.ERROR, logger="groundplane_otel"):
            instrumentor.instrument(tracer_provider=provider, meter_provider=meter_provider)
        assert instrumentor.guard is None
        assert caplog.messages == [
            f"groundplane: the guard from {POLICY} is NOT installed: "
            + SECOND_GUARD.format(origin="install()")
        ]
        assert guarded_wrong_winner(provider) == ("wrong_winner", 1)
        assert outputs(reader) == {("enforce", "blocked"): 1}
    finally:
        guard.uninstall()


def outputs(reader: InMemoryMetricReader) -> dict[tuple[str, str], int]:
    """groundplane.outputs by (mode, outcome)."""
    found: dict[tuple[str, str], int] = {}
    data = reader.get_metrics_data()
    for resource in data.resource_metrics if data else ():
        for scope in resource.scope_metrics:
            for metric in scope.metrics:
                if metric.name == "groundplane.outputs":
                    for point in metric.data.data_points:
                        key = (
                            point.attributes["groundplane.mode"],
                            point.attributes["groundplane.outcome"],
                        )
                        found[key] = found.get(key, 0) + point.value
    return found


def test_invalid_policy_under_strict_stops_the_process_at_startup(tmp_path: Path) -> None:
    """Finding 7: GROUNDPLANE_STRICT=true makes an invalid policy fatal: exit status 2 before
    the app runs, the located error on stderr."""
    bad = tmp_path / "bad.yaml"
    bad.write_text(POLICY.read_text().replace("kind: table", "kind: tabel"))
    with pytest.raises(subprocess.CalledProcessError) as failed:
        run_app(tmp_path, "wrong", GROUNDPLANE_POLICY=str(bad), GROUNDPLANE_STRICT="true")
    result = failed.value
    assert result.returncode == 2
    assert result.stdout == ""  # the app never ran
    assert result.stderr.splitlines() == [
        "groundplane: invalid policy and strict mode is on, so the process stops before the app "
        f"runs (exit status 2): {bad}:25: facts.campaign_ctr.kind: expected one of ranking, "
        "table, domain, value, documents, got 'tabel'. Fix: did you mean 'table'?"
    ]


def test_an_invalid_policy_saying_strict_stops_the_process_too(tmp_path: Path) -> None:
    """The policy's own top-level ``strict: true`` counts when the file reads that far."""
    bad = tmp_path / "bad.yaml"
    text = POLICY.read_text().replace("kind: table", "kind: tabel")
    bad.write_text(text.replace("version: 1", "version: 1\nstrict: true", 1))
    with pytest.raises(subprocess.CalledProcessError) as failed:
        run_app(tmp_path, "wrong", GROUNDPLANE_POLICY=str(bad))
    assert failed.value.returncode == 2
    assert failed.value.stdout == ""
